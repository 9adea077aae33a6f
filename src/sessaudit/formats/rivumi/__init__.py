"""Rivumi run directories: spec/ (what the spec states), read/ (the read-only per-file checks), native/
(Rivumi's own replay and resume answers), seed/ (seeds and the run a seed is asked for), verify/ (the
verify entry point and the cross-record checks) and build/ (the project's fixture builders)."""
