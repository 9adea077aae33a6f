"""sessaudit: audit and forensically analyse AI-agent session logs."""

__version__ = "0.1.0"
