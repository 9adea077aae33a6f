"""Issue 8: verify's peak memory grows with a session's state at a pinned rate per MB of a dense session.

Dense sessions (short messages and tool results: ≈ 2.2 ids and 0.65 entries per KB) are the worst case for
state per byte. The bound is on the growth of peak RSS between two sizes, so the interpreter and imports
cancel out; a regression to heavier per-id state (another copy of every id, say) exceeds it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sessaudit.formats.tiny_agent.build.session import DEFAULT_CREATED_AT

BENCH = Path(__file__).resolve().parents[3] / "bench"
MB = 1_000_000
SMALL, LARGE = 15 * MB, 60 * MB
# Measured (these dense sessions, 15 → 60 MB): 0.47 MiB of peak RSS per MB since the reducer keeps one copy
# of each id (0.56 before); 50 → 200 MB: 0.48. The bound leaves room for noise.
GROWTH_MIB_PER_MB = 0.55


def _corpus() -> ModuleType:
    loaded = sys.modules.get("bench_corpus")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def dense_session(folder: Path, size: int, seed: int = 1) -> Path:
    """A valid session of about `size` bytes from bench/corpus.py's dense writer (short contents)."""
    corpus = _corpus()
    folder.mkdir(parents=True, exist_ok=True)
    path: Path = corpus.write_tiny_agent(
        folder,
        seed,
        DEFAULT_CREATED_AT,
        size,
        corpus.ShortTextPool(seed),
        "clean",
        corpus._short_result_length,
    )
    return path


def peak_rss_mib(path: Path) -> float:
    """Peak RSS of `sessaudit verify` on one file, in a fresh process; it must verify clean."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sessaudit", "verify", "--format", "json", "--quiet", str(path)],
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0
    return usage.ru_maxrss / 1024  # KiB on Linux


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss is in KiB on Linux")
def test_peak_memory_grows_at_most_the_pinned_rate(tmp_path: Path) -> None:
    small = dense_session(tmp_path / "small", SMALL)
    large = dense_session(tmp_path / "large", LARGE)
    growth = peak_rss_mib(large) - peak_rss_mib(small)
    megabytes = (large.stat().st_size - small.stat().st_size) / MB
    assert growth <= GROWTH_MIB_PER_MB * megabytes, (
        f"peak RSS grew {growth:.1f} MiB over {megabytes:.0f} MB ({growth / megabytes:.2f} MiB/MB)"
    )
