"""`python -m sessaudit`."""

from sessaudit.cli import main

main()
