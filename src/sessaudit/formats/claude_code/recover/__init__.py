"""What is open in a session: its turns (a user prompt to its final answer), their open calls, and the
recovery each open turn needs (its seed is seed/'s)."""
