"""The text of every JSON document sessaudit writes (reports, SARIF, baselines, seeds): `pretty_json`.

The text is, byte for byte, `json_safe(json.dumps(document, indent=2, sort_keys=True,
ensure_ascii=False)) + "\\n"`. `json.dumps` with an indent runs the pure-Python encoder (its C encoder
writes compact JSON only); orjson writes the same text several times faster, so `pretty_json` uses
orjson whenever it is certain to write the same bytes, and the json module otherwise.

orjson path: a walk of the document (`_orjson_writes_alike`) finds only these exact types (no
subclass), nested at most 254 levels (orjson refuses more):

- dict with str keys, list, tuple: `{}`/`[]` when empty, else one member per line indented by two
  spaces and `": "` after a key, as json.dumps writes them. Keys sort by code point in both: orjson
  compares their UTF-8 bytes, and UTF-8 keeps code point order (lone surrogates aside, below).
- str: both escape `"`, `\\`, `\\b \\f \\n \\r \\t` and the other C0 controls as `\\u00xx`, and
  write every other character raw (the tests check every code point, as a value and as a key).
- int, bool, None: the same digits, `true`, `false`, `null`.
- float, where orjson writes it as `float.__repr__` does (json.dumps writes repr), checked value by
  value: they differ for some (`1e-07`/`1e-7`, `1e-05`/`0.00001`; NaN and infinities, which
  json.dumps writes `NaN`/`Infinity` and orjson `null`).

Then orjson writes; it refuses an int beyond 64 bits and a lone surrogate in a str. Everything else
takes the json.dumps path, so the json module writes it or raises exactly as before: such a float or
int or str, a key that is not a str, a str/int/dict/list subclass, an Enum, a namedtuple, a UUID,
deeper nesting, a cycle (the walk is depth first and stops at the depth limit).

On the orjson path `json_safe` runs only if the text holds one of its characters: all are U+007F or
above, so it is enough to search the bytes left once the ASCII bytes below DEL are deleted. On a
4.5 MB report (examples/ 40 times) the text takes 27 ms instead of 187 ms."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import orjson

from sessaudit.outputsafety import JSON_UNSAFE, json_safe

_ORJSON_OPTIONS: Final = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
# orjson writes 254 levels of arrays and objects and refuses more (tests/test_jsonout.py)
_ORJSON_MAX_DEPTH: Final = 254
# every byte below DEL: what bytes.translate deletes to leave the bytes of non-ASCII characters and DEL
_ASCII_BELOW_DEL: Final = bytes(range(0x7F))


def pretty_json(document: object) -> str:
    """The document as indented JSON with sorted keys and a final newline, unsafe characters escaped:
    exactly `json_safe(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)) + "\\n"`."""
    if _orjson_writes_alike(document):
        try:
            data = orjson.dumps(document, option=_ORJSON_OPTIONS)
        except orjson.JSONEncodeError:
            pass  # an int beyond 64 bits or a lone surrogate: the json module writes it
        else:
            text = data.decode()
            # Deleting the ASCII bytes below DEL leaves whole UTF-8 sequences (all their bytes are
            # 0x80 or above): the text's characters from DEL up, in order, where json_safe's all are.
            beyond_ascii = data.translate(None, _ASCII_BELOW_DEL)
            return json_safe(text) if beyond_ascii and JSON_UNSAFE.search(beyond_ascii.decode()) else text
    return json_safe(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"


def _orjson_writes_alike(document: object) -> bool:
    """Whether the document holds only values orjson writes exactly as json.dumps does, nested no deeper
    than orjson writes (module doc); the int range and lone surrogates are left to orjson, which refuses
    them. Depth first with a stack of member iterators, so that a cycle ends at the depth limit."""
    stack: list[Iterator[Any]] = [iter((document,))]
    push = stack.append
    while stack:
        for value in stack[-1]:
            kind = type(value)
            if kind is str or kind is int or kind is bool or value is None:
                continue
            if kind is dict:
                if len(stack) > _ORJSON_MAX_DEPTH:
                    return False
                for key in value:
                    if type(key) is not str:
                        return False
                push(iter(value.values()))
                break
            if kind is list or kind is tuple:
                if len(stack) > _ORJSON_MAX_DEPTH:
                    return False
                push(iter(value))
                break
            if kind is not float or orjson.dumps(value) != float.__repr__(value).encode():
                return False  # another type, or a float orjson writes otherwise
        else:
            stack.pop()
    return True
