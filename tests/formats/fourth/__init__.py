"""A fourth format, "tally", built only on the public plugin interface: nothing outside this folder
knows it."""
