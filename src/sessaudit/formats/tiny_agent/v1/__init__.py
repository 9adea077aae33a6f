"""The legacy v1 verifier (`"type":"session"` headers, spec §15)."""
