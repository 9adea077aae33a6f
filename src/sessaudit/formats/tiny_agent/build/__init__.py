"""Test-fixture builders of tiny-agent sessions (v2 and legacy v1); no verifying module imports them."""
