"""tiny-agent's answer for a whole file (spec §3): which error its reducer meets first, from one pass."""

from __future__ import annotations

import re
from typing import Any, Final

from sessaudit.framing import Line

_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")
# tiny-agent's code for each line-level rule of strictjson.
LINE_CODES: Final = {
    "SA102": "INVALID_UTF8",
    "SA103": "MALFORMED_JSON",
    "SA104": "BLANK_LINE",
    "SA105": "CRLF_NOT_ALLOWED",
    "SA106": "MALFORMED_JSON",
    "SA107": "MALFORMED_JSON",
    "SA108": "MALFORMED_JSON",
}


class Precedence:
    """tiny-agent scans all committed bytes for UTF-8-encoded surrogates first (MALFORMED_JSON at that
    line), then decodes them all (INVALID_UTF8, reported at line 1), and only then reads line by line. A
    streaming pass sees these in file order, so it records all three and answers at the end."""

    def __init__(self) -> None:
        self.first_surrogate: int | None = None
        self.invalid_utf8 = False
        self.first_error: tuple[str, int, int | None] | None = None

    def error(self, code: str, line: int, seq: int | None) -> None:
        """A line-by-line error (framing, JSON, header or reducer); the first one counts."""
        if self.first_error is None:
            self.first_error = (code, line, seq)

    def line_problem(self, line: Line, rule: str) -> str:
        """Note a strictjson problem of `line`; return tiny-agent's code for it."""
        if rule == "SA103":
            if self.first_surrogate is None:
                self.first_surrogate = line.number
        elif rule == "SA102":
            self.invalid_utf8 = True
        return LINE_CODES[rule]

    def scan(self, line: Line) -> None:
        """Only the encoding of a line that is not otherwise read (after a v1 or unsupported header)."""
        data = line.data
        if self.first_surrogate is None and b"\xed" in data and _ENCODED_SURROGATE.search(data):
            self.first_surrogate = line.number
        elif not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                self.invalid_utf8 = True

    def answer(self, committed: bool, repaired_length: int, operation: str) -> dict[str, Any]:
        """`native.reducer` (CONTRACT §6): what tiny-agent's TypeScript reducer answers."""
        error: tuple[str, int, int | None] | None
        if not committed:
            error = ("MISSING_HEADER", 1, None)
        elif self.first_surrogate is not None:
            error = ("MALFORMED_JSON", self.first_surrogate, None)
        elif self.invalid_utf8:
            error = ("INVALID_UTF8", 1, None)
        else:
            error = self.first_error
        if error is not None:
            code, line, seq = error
            return {
                "ok": False,
                "code": code,
                "line": line,
                "seq": seq,
                "repaired_length": None,
                "operation": None,
            }
        return {
            "ok": True,
            "code": None,
            "line": None,
            "seq": None,
            "repaired_length": repaired_length,
            "operation": operation,
        }
