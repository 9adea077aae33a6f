"""Claude Code as a format the registry has: installed through its entry point or, where it is not (yet),
registered for the duration of a `with` block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sessaudit.formats.claude_code.plugin import NAME, PLUGIN
from sessaudit.registry import registered, registry


@contextmanager
def claude_code_installed() -> Iterator[None]:
    if registry().get(NAME) is not None:
        yield
        return
    with registered(PLUGIN):
        yield
