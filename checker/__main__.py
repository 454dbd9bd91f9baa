"""``python -m checker`` runs the mcheck command line."""

from checker.cli import main

main()
