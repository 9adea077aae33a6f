"""Reading a Claude Code session's files read-only: where they lie, and their lines as records."""
