"""tiny-agent session files: framing, strict JSON, the v2 reducer, digests and open-run conditions."""
