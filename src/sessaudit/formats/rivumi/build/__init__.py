"""The project's own Rivumi run-directory builders: fixtures for tests, examples and the benchmarks (never
imported by the verifying modules)."""
