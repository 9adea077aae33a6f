"""`--claims`: the claims file and its check against one Half-Pi store."""
