"""The compact id namespace behaves exactly like the dict it replaces."""

from __future__ import annotations

import random
import uuid

import pytest

from sessaudit.formats.tiny_agent.idtable import IdTable


def _uuid7(generator: random.Random) -> str:
    value = generator.getrandbits(128)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def test_the_table_agrees_with_a_dict_across_flushes_and_growth() -> None:
    generator = random.Random(8)
    table, reference = IdTable(), {}
    keys: list[str] = []
    for step in range(3 * IdTable.YOUNG + 500):
        if keys and generator.random() < 0.2:
            key = generator.choice(keys)  # an overwrite, often of an id already moved to the arrays
        else:
            key = _uuid7(generator)
            keys.append(key)
        value = generator.choice((-4, -3, -2, -1, step))
        table[key] = value
        reference[key] = value
        probe = generator.choice(keys)
        assert table.get(probe, 7) == reference.get(probe, 7)
    assert len(table) == len(reference)
    assert sorted(table) == sorted(reference)
    for key, value in reference.items():
        assert key in table
        assert table[key] == value
        assert table.get(key, 99) == value


def test_lookups_of_other_strings_miss_exactly() -> None:
    table = IdTable()
    key = "01a029fc-5d80-7226-b63c-5ab791b7584a"
    table[key] = 3
    for _ in range(IdTable.YOUNG):  # move `key` into the arrays
        table[_uuid7(random.Random(len(table)))] = -1
    for other in (key.upper(), key.replace("-", ""), key + " ", "-" + key[:-1], "", "x" * 36):
        assert other not in table
        assert table.get(other, -9) == -9
        with pytest.raises(KeyError):
            table[other]
    assert 5 not in table
    assert table[key] == 3
