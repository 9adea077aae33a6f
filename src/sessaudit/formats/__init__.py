"""Input formats: one subpackage per source system, each with its reader, checks and recovery."""
