"""Half-Pi test-store builder (fixtures for tests, examples and bench): seeded, byte-reproducible stores
of any schema generation, and crash images. Never imported by a verifying module."""
