"""A fork's copied history (spec §6): the parent's first lines repeated as they are, re-stamped with the
time of copying, and the records that go with them (responses, calls, turns, rate-limit repeats)."""

from __future__ import annotations

from dataclasses import replace

from sessaudit.formats.codex.build.family import Family, FileState, LineRecord, ResponseRecord
from sessaudit.formats.codex.build.ids import format_time
from sessaudit.formats.codex.build.parts import Usage


def copy_history(family: Family, parent: FileState, child: FileState, through: int) -> list[ResponseRecord]:
    """Append `parent`'s lines 1..`through` to `child` (a burst a millisecond or less apart); the copied
    responses, in order. Copied calls are answered only when their output was among the copied lines."""
    base = len(child.lines)
    moment = family.ids.tick(0.001, 0.01)
    for index in range(through):
        data = {**parent.lines[index].data, "timestamp": format_time(moment)}
        child.lines.append(LineRecord(data, (parent.key, index)))
        moment = family.ids.tick(0.0, 0.001)
    child.parent_key = parent.key
    child.copied = (base, base + through - 1)
    child.turn_starts.extend(base + start for start in parent.turn_starts if start < through)
    child.repeats.extend(base + line for line in parent.repeats if line < through)
    copied: list[ResponseRecord] = []
    for record in [r for r in family.responses if r.file == parent.key]:
        kept = [base + i for i in record.token_count_lines if i < through]
        if kept:
            items = [base + i for i in record.items if i < through]
            index = len(family.responses)
            copy = ResponseRecord(index, child.key, record.usage, kept, items, len(kept) > 1, record.index)
            family.responses.append(copy)
            copied.append(copy)
    for call in [c for c in family.calls if c.file == parent.key and c.line < through]:
        answer = call.answer if call.answer is not None and call.answer < through else None
        end = call.exec_end if call.exec_end is not None and call.exec_end < through else None
        family.calls.append(
            replace(
                call,
                file=child.key,
                line=base + call.line,
                answer=None if answer is None else base + answer,
                exec_end=None if end is None else base + end,
                copied=True,
            )
        )
    return copied


def last_total(family: Family, copied: list[ResponseRecord]) -> Usage | None:
    """The running total the last copied token_count shows (what a resumed or forked Codex restores)."""
    if not copied:
        return None
    state = family.files[copied[-1].file]
    info = state.lines[copied[-1].token_count_lines[0]].data["payload"]["info"]
    return Usage.from_json(info["total_token_usage"])
