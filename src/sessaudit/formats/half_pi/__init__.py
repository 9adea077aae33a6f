"""Half-Pi Mind SQLite stores: evidence-safe snapshots, schema generations and the project's store builder."""
