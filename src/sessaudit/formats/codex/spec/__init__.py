"""What the Codex rollout format is (docs/formats/codex.md), as data: line types, payload types, tools."""
