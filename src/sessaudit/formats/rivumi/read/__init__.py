"""Read one Rivumi run directory without changing it, and the per-file checks: events.jsonl (framing,
envelope, data, order, usage ledger), session.json, request.json and .writer.lock."""
