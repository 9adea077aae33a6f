"""Codex rollouts: usage."""
