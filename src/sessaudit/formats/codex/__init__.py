"""OpenAI Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`),
spec docs/formats/codex.md: read (read/), checked (check/), their open calls and turns (recover/), seeds
and the native repair (seed/), the exact usage ledger (usage/), warehouse rows (warehouse/), test rollouts
(build/)."""
