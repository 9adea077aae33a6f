"""Rivumi's own answers, recomputed read-only: what `sessions --replay-json` prints and what its resume
would answer, with pydantic models of the shapes its resume validates."""
