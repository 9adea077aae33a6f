"""Property fuzzing (issue 9): the LF framing and strict-JSON layer, and arbitrary bytes as a named file."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz_targets import INTERESTING_BYTES, check_framing, fuzz_settings, run_arbitrary_file

# bytes biased towards JSON structure, so the strict decoder's locator is reached, not just the UTF-8 check
JSONISH = st.lists(
    st.one_of(st.sampled_from([*INTERESTING_BYTES, b'"a"', b"1", b"true", b"  "]), st.binary(max_size=4)),
    max_size=40,
).map(b"".join)


@fuzz_settings(300)
@given(st.one_of(st.binary(max_size=2048), JSONISH), st.integers(min_value=1, max_value=64))
@example(b"\xef\xbb", 1)
@example(b"[" * 10_000 + b"\n", 7)
@example(b'{"a":1,"a":2}\n{"\\ud800":0}\n\xed\xa0\x80\n', 3)
def test_any_bytes_frame_and_decode_or_are_located_problems(data: bytes, chunk_size: int) -> None:
    check_framing(data, chunk_size)


@fuzz_settings(80)
@given(
    st.one_of(st.binary(max_size=1024), JSONISH),
    st.sampled_from(["x.jsonl", "notes.txt", "session.json", "events.jsonl", "half-pi.db"]),
)
@example(b"SQLite format 3\x00" + bytes(100), "half-pi.db")
@example(b'{"kind":"header"}\n', "x.jsonl")
@example(b'{"type":"session","version":1}\n', "x.jsonl")
@example(b'{"event_type":"run.created","run_id":"r","sequence":0}\n', "events.jsonl")
def test_any_file_named_or_walked_gets_a_valid_report(data: bytes, name: str) -> None:
    run_arbitrary_file(data, name)
