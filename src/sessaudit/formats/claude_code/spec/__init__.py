"""What docs/formats/claude-code.md says, as data: record types, their fields, and the tool table."""
