"""A Rivumi run's rows for the warehouse (facts, usage ledger, tool calls), from the verifier's own event
reader."""
