"""What the Rivumi spec states outright: the event types and their data keys, session.json's fields and
defaults, and Rivumi's byte encodings. Imports nothing else of the format."""
