"""Checks over a session's decoded records: each record's shape, then the links between records."""
