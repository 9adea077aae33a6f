"""The project's own Claude Code transcript builders: fixtures for tests, examples and the benchmarks
(never imported by the verifying modules). transcript.py writes the files, scenarios.py holds the
ready-made sessions, manifest.py the truth written beside them."""
