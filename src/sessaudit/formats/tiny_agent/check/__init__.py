"""Checking a v2 session against tiny-agent's reducer: the header, the reducer and its state, the fact
handlers (entries, records, steps, compaction) and the notes beyond the reducer."""
