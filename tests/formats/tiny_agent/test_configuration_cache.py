"""parse_configuration recognises a repeated snapshot by its encoding: never a different one."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sessaudit.formats.tiny_agent.build.parts import Configuration
from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.formats.tiny_agent.read.messages import parse_configuration
from sessaudit.formats.tiny_agent.read.shapes import Violation

POINTER = "/record/configurationSnapshot"


def snapshot() -> dict[str, Any]:
    return Configuration(tools=("read", "bash")).snapshot()


def test_a_repeated_snapshot_gives_the_same_digest_and_shared_names() -> None:
    first = parse_configuration(snapshot(), POINTER)
    again = parse_configuration(snapshot(), POINTER)
    assert first == again == (sha256_digest(snapshot()), frozenset({"read", "bash"}))
    assert again[1] is first[1]  # attempts share one name set


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (lambda value: value.update(model=1), f"{POINTER}/model"),
        (lambda value: value.update(model=True), f"{POINTER}/model"),
        (lambda value: value["tools"].append(copy.deepcopy(value["tools"][0])), f"{POINTER}/tools/2/name"),
        (lambda value: value.update(extra="x"), f"{POINTER}/extra"),
        (lambda value: value.update(systemPromptDigest="sha256:00"), f"{POINTER}/systemPromptDigest"),
    ],
)
def test_a_snapshot_that_differs_from_an_accepted_one_is_validated_again(change: Any, pointer: str) -> None:
    parse_configuration(snapshot(), POINTER)
    changed = snapshot()
    change(changed)
    with pytest.raises(Violation) as caught:
        parse_configuration(changed, POINTER)
    assert caught.value.pointer == pointer


def test_key_order_does_not_change_the_digest() -> None:
    value = snapshot()
    reordered = dict(reversed(list(value.items())))
    assert parse_configuration(reordered, POINTER) == parse_configuration(value, POINTER)


def test_an_integer_beyond_64_bits_is_validated_the_long_way() -> None:
    value = snapshot()
    value["model"] = 2**70
    with pytest.raises(Violation):
        parse_configuration(value, POINTER)
