"""Checks of a rollout: each line's shape (shape.py), its own lines and its copy (copies.py), and the
links between lines: session_meta, calls and outputs, cumulative totals, times, the file name (links.py)."""
