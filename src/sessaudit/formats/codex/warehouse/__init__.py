"""Codex rollouts: warehouse."""
