"""The exact usage ledger of Claude Code transcripts: one row per API response (spec §5, §6, §9)."""
