"""Reading fact values: ids and digests, the shape checks and their violations, messages."""
