"""The warehouse extractors of tiny-agent sessions (v2 and legacy v1)."""
