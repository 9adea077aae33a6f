"""Seeds of an open Rivumi run: sessaudit's seed (CONTRACT §5), Rivumi's own fork seed (`seed --native`),
and picking the run directory a seed is asked for."""
