"""Claude Code session transcripts (`~/.claude/projects/<project-dir>/<session-uuid>.jsonl`, with sub-agent
files beside them or under `<session-uuid>/subagents/`), as described in docs/formats/claude-code.md. So far
only build/ exists: the project's fixture builders, which write realistic transcripts and a manifest of
their truth (every API response with its final usage, every tool call with its outcome)."""
