"""Reading rollouts: where they lie (layout.py) and their lines (lines.py), read-only."""
