"""verify_rivumi (verifier.py): one run directory to the engine's SourceOutcome, with the reconciliation of
the run's records and where Rivumi's own records or readers disagree."""
