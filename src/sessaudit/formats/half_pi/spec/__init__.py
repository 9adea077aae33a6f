"""Half-Pi facts of the spec recomputed from plain values: Go JSON, the §6 digests, outbox payloads, the §7
state machines and the §3 schema generations. Imports nothing else of half_pi."""
