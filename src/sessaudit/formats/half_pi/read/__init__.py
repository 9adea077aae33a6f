"""Reading a Half-Pi store without changing it: its files as bytes, the evidence-safe snapshot, rows by
column name."""
