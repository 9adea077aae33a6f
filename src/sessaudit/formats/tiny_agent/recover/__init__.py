"""After reduction: open work as conditions of runs, the recovery plan, and seeds."""
