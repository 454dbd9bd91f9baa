"""``python -m checker`` runs the mcheck command line."""

from checker.cli.commands import main

main()
