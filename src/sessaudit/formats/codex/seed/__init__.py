"""Codex seeds (seeding.py) and the lines that answer open calls (repair.py) for seeds and the native
repair."""
