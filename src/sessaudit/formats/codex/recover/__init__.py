"""Codex turns and their recoveries (turns.py), and what `codex resume` does with them (words.py)."""
