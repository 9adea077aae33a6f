"""Rivumi's own resume answer (a source's `native.resume`) in words, for the console."""

from __future__ import annotations

from typing import Any


def describe_resume(native: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    resume = native.get("resume")
    if isinstance(resume, dict):
        if resume.get("ok"):
            repaired = resume.get("repaired_to")
            repair = f" after setting last_event_sequence back to {repaired}" if repaired is not None else ""
            lines.append(f"Rivumi's own resume: accepts the run{repair}")
        elif resume.get("crash"):
            lines.append(f"Rivumi's own resume: crashes ({resume.get('message')})")
        else:
            lines.append(f"Rivumi's own resume: refuses ({resume.get('message')})")
    return lines
