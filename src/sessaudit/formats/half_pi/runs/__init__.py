"""Half-Pi runs: their states and open conditions, `native.startup_recovery`, when each last wrote, and the
seeds of open runs."""
