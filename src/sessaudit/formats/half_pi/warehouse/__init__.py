"""A Half-Pi store snapshot as warehouse facts, usage ledger and tool calls."""
