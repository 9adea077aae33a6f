"""The v2 verification pass: one streamed read of a file through check/ and recover/ to its outcome."""
