"""Rivumi run directories: the project's builder, event-log verification and manifest checks."""
