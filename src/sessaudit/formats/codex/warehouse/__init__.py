"""Codex rollouts → warehouse rows: a fact per line, the exact ledger, the session's own tool calls."""
