"""Tests of the Codex rollout format package."""
