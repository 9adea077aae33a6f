"""Coverage-guided fuzzing with atheris (issue 9; needs `pip install atheris`, not run by CI).

`python bench/fuzz_atheris.py framing -runs=100000` or `... tiny-agent -runs=5000 [CORPUS_DIR]`; any other
arguments go to libFuzzer. The property is that of tests/fuzz_targets.py: nothing raises, and a report
validates against its schema with every finding located."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

with atheris.instrument_imports(include=["sessaudit"]):
    from tests import fuzz_targets as targets

TARGETS = ("framing", "tiny-agent", "rivumi-events")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        raise SystemExit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer arguments]")
    target = sys.argv.pop(1)
    folder = Path(tempfile.mkdtemp(prefix="sessaudit-atheris-"))
    seeds = targets.tiny_agent_seeds()
    run_dir = targets.rivumi_template("pending-approval")

    def one_input(data: bytes) -> None:
        if target == "framing":
            targets.check_framing(data, 1 + (data[0] % 64 if data else 0))
        elif target == "tiny-agent":
            # the first byte picks a builder-made session to splice the input into, so coverage reaches
            # the reducer, not only the header check
            base = list(seeds.values())[data[0] % len(seeds)] if data else b""
            cut = data[1] * 16 if len(data) > 1 else 0
            path = folder / "s.jsonl"
            path.write_bytes(base[:cut] + data[2:])
            targets.check_audit([str(path)])
        else:
            targets.run_rivumi_bytes(run_dir, "events.jsonl", data)

    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
