"""The built-in formats' names, as reports and discovery give them (the core knows none of them)."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    TINY_AGENT = "tiny-agent"
    RIVUMI = "rivumi"
    HALF_PI = "half-pi"
