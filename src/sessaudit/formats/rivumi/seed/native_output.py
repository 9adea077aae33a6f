"""`sessaudit seed --native`: Rivumi's own fork seed (its `--fork-from-event`) on stdout, byte for byte, or
its refusal on stderr with its exit status."""

from __future__ import annotations

import os
import sys

from sessaudit.outputsafety import json_safe
from sessaudit.plugin import OptionError
from sessaudit.reporters.console import safe


def native_seed(path: str, run: str | None, sequence: int | None) -> int:
    """Rivumi prints to a UTF-8 stdout whose error handler comes from the locale, like ours (strict, or
    surrogateescape in a C/POSIX/C.UTF-8 locale), so ours decides whether a lone surrogate is printable.
    Where Rivumi would crash (a traceback, exit 1), one line names the crash and the exit status is 1."""
    from sessaudit.formats.rivumi.seed.forkseed import directory_fork_seed
    from sessaudit.formats.rivumi.seed.runs import NativeSeedUnavailable, choose_rivumi_run

    try:
        chosen = choose_rivumi_run(path, run)
    except NativeSeedUnavailable as error:
        raise OptionError(str(error)) from None
    answer = directory_fork_seed(
        chosen.real_path,
        events_path=os.path.join(chosen.path, "events.jsonl"),
        sequence=sequence,
        stdout_errors=getattr(sys.stdout, "errors", None) or "strict",
    )
    if answer.text is not None:  # exact bytes, except on a terminal: there unsafe characters as \uXXXX
        sys.stdout.write(json_safe(answer.text) if sys.stdout.isatty() else answer.text)
    elif answer.crash is not None:
        _say(f"sessaudit: --native: {safe(answer.message)} (a traceback from Rivumi, exit 1)")
    elif not answer.stderr:  # no answer is known: sessaudit could not read the log
        _say(f"sessaudit: --native: {safe(answer.message)}")
    else:  # Rivumi's own refusal, with anything from the log in it escaped
        sys.stderr.write("\n".join(safe(line) for line in answer.stderr.split("\n")))
    return answer.exit_status


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
