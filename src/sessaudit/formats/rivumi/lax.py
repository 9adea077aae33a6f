"""pydantic's lax JSON coercions, guided by our strict JSON Schemas: what Rivumi's own reader accepts.

Rivumi loads session.json and request.json with pydantic models in lax mode (spec §3.2, §4.1), so
`"step": "3"` loads although the schema says integer. sessaudit's own checks stay strict (SA532 reports
the string); `native.resume` must answer as Rivumi does, so it validates a copy coerced here.

Each scalar conversion is pydantic's own (a TypeAdapter in lax JSON mode): integer ← an integral float,
a bool or an integer string; number ← a bool or a numeric string; boolean ← 0/1 or pydantic's words.
Strings are never made from numbers (pydantic v2 does not). Unions (`anyOf`/`oneOf`) take the first branch
whose coerced value validates, as pydantic's smart mode does for these models.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import TypeAdapter, ValidationError

_ADAPTERS: Final[dict[str, TypeAdapter[Any]]] = {
    "integer": TypeAdapter(int),
    "number": TypeAdapter(float),
    "boolean": TypeAdapter(bool),
    "date-time": TypeAdapter(datetime),
}


def lax_value(kind: str, value: Any) -> Any | None:
    """What pydantic's lax JSON mode makes of `value` for a field of `kind` (integer, number, boolean,
    date-time), or None when it refuses. pydantic itself decides, from the value's JSON text."""
    try:
        return _ADAPTERS[kind].validate_json(json.dumps(value, allow_nan=False))
    except (ValidationError, ValueError):
        return None


def lax_integer(value: Any) -> int | None:
    """The int pydantic's lax mode reads from `value`, or None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    result = lax_value("integer", value)
    return result if isinstance(result, int) else None


class LaxCoercer:
    """Coerce documents for one root schema (its `$defs` resolve through `validator`)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.root = schema
        self.validator = Draft202012Validator(schema)

    def is_valid(self, document: Any) -> bool:
        """Whether `document`, coerced as pydantic would, satisfies the schema."""
        return bool(self.validator.is_valid(self.coerce(document)))

    def coerce(self, value: Any, schema: Any = None) -> Any:
        schema = self.root if schema is None else schema
        if not isinstance(schema, dict):
            return value
        if "$ref" in schema:
            value = self.coerce(value, self._resolve(schema["$ref"]))
        for branch in schema.get("allOf", []):
            value = self.coerce(value, branch)
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                value = self._union(value, schema[keyword])
        value = self._scalar(value, schema.get("type"))
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            value = {key: self.coerce(item, properties.get(key, extra)) for key, item in value.items()}
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            value = [self.coerce(item, schema["items"]) for item in value]
        return value

    def _union(self, value: Any, branches: list[Any]) -> Any:
        for branch in branches:  # an exact match first, as pydantic's smart union prefers it
            if self.validator.evolve(schema=branch).is_valid(value):
                return value
        for branch in branches:
            coerced = self.coerce(value, branch)
            if self.validator.evolve(schema=branch).is_valid(coerced):
                return coerced
        return value

    def _scalar(self, value: Any, declared: Any) -> Any:
        types = [declared] if isinstance(declared, str) else list(declared or [])
        if not types or _json_type(value) in types or (_json_type(value) == "integer" and "number" in types):
            return value
        for name in types:
            converted = lax_value(name, value) if name in ("integer", "number", "boolean") else None
            if converted is not None:
                return converted
        return value

    def _resolve(self, reference: str) -> Any:
        node: Any = self.root
        for part in reference.removeprefix("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
