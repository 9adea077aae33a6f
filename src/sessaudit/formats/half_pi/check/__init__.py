"""The Half-Pi invariants of spec §10 on a snapshot: the SQL check files and the Python checks of history
(SA601–SA629) and of runs, approvals and audits (SA630–SA679)."""
