"""Seeds of open Claude Code turns (CONTRACT §5) and the repair lines that answer their dangling calls."""
