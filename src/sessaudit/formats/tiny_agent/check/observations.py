"""Findings on accepted facts (the notes of notes.py and the header's): buffered per transaction, capped."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.tiny_agent.check.state import Place
from sessaudit.model import Finding
from sessaudit.rules import finding

# At most this many findings of one rule per session are listed; one more finding counts the rest.
CAP: Final = 10
# Rules reported once per session, with a count and the first occurrence.
AGGREGATED: Final = frozenset(("SA401",))

Observation = tuple[str, int, int, int | None, str, str, dict[str, Any]]


class Observations:
    """Findings on accepted facts: buffered per transaction (a rejected one leaves none), then capped."""

    def __init__(self, path: str, session_id: str | None) -> None:
        self.path = path
        self.session_id = session_id
        self.buffer: list[Observation] = []
        self.kept: list[Observation] = []
        self.counts: dict[str, int] = {}
        self.first_dropped: dict[str, Observation] = {}

    def add(self, code: str, place: Place, pointer: str, message: str, evidence: dict[str, Any]) -> None:
        self.buffer.append(
            (code, place.line, place.offset, place.seq or None, place.prefix + pointer, message, evidence)
        )

    def add_now(self, item: Observation) -> None:
        """An observation outside any transaction (the header)."""
        self.buffer.append(item)
        self.commit()

    def commit(self) -> None:
        for item in self.buffer:
            code = item[0]
            count = self.counts.get(code, 0) + 1
            self.counts[code] = count
            if count <= (1 if code in AGGREGATED else CAP):
                self.kept.append(item)
            elif code not in self.first_dropped and code not in AGGREGATED:
                self.first_dropped[code] = item
        self.buffer.clear()

    def rollback(self) -> None:
        self.buffer.clear()

    def listed(self, code: str) -> bool:
        """Whether this rule's listed findings are complete: later ones are only counted, so their
        messages need not be built."""
        return self.counts.get(code, 0) >= (1 if code in AGGREGATED else CAP + 1)

    def findings(self) -> list[Finding]:
        result = []
        for code, line, offset, seq, pointer, message, evidence in self.kept:
            count = self.counts[code]
            if code in AGGREGATED:
                message = f"{count} fact(s) like this; the first: {message}"
                evidence = {**evidence, "count": count}
            result.append(self._finding(code, line, offset, seq, pointer, message, evidence))
        for code, (_, line, offset, seq, pointer, _, _) in self.first_dropped.items():
            more = self.counts[code] - CAP
            result.append(
                self._finding(
                    code,
                    line,
                    offset,
                    seq,
                    pointer,
                    f"{more} more finding(s) of {code} are not listed; this is the first of them",
                    {"not_listed": more},
                )
            )
        return result

    def _finding(
        self,
        code: str,
        line: int,
        offset: int,
        seq: int | None,
        pointer: str,
        message: str,
        evidence: dict[str, Any],
    ) -> Finding:
        return finding(
            code,
            message,
            path=self.path,
            session_id=self.session_id,
            line=line,
            byte_offset=offset,
            seq=seq,
            pointer=pointer or None,
            evidence=evidence,
        )
