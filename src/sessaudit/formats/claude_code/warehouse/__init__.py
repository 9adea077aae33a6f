"""Claude Code transcripts → warehouse rows: facts per line, the exact ledger, tool calls."""
