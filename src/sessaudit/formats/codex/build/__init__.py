"""The project's own Codex rollout builders: fixtures for tests, examples and the benchmarks (never imported
by the verifying modules). rollout.py writes the files, scenarios.py holds the ready-made sessions,
corpus.py the benchmark mixture, manifest.py the truth written beside them."""
