"""Pick one Rivumi run directory under a path, as `rivumi sessions --run-root R ID` resolves ID (§5.2)."""

from __future__ import annotations

import os

from sessaudit.discovery import Candidate, discover


class NativeSeedUnavailable(Exception):
    """The path names no Rivumi run, or several without a `--run` that picks one."""


def choose_rivumi_run(path: str, run: str | None) -> Candidate:
    """The run directory under `path`: the only one, or the one `run` names (its directory name exactly,
    else the unique directory whose name starts with `run`)."""
    candidates = discover([path]).candidates
    runs = [item for item in candidates if item.format == "rivumi" and item.problem is None]
    if not runs:
        others = sorted({str(item.format) for item in candidates if item.format is not None})
        detail = f" ({', '.join(others)} sources have no native seed format)" if others else ""
        raise NativeSeedUnavailable(f"{path} holds no Rivumi run directory{detail}")
    if run is None:
        if len(runs) > 1:
            raise NativeSeedUnavailable(f"{path} holds {len(runs)} Rivumi runs; name one with --run")
        return runs[0]
    names = {item: os.path.basename(os.path.normpath(item.real_path)) for item in runs}
    exact = [item for item in runs if names[item] == run]
    matching = exact or [item for item in runs if names[item].startswith(run)]
    if len(matching) != 1:
        raise NativeSeedUnavailable(f"no unique run matching {run!r} under {path}")
    return matching[0]
