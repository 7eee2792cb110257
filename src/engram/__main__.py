"""``python -m engram`` runs the command line."""

from engram.interfaces.cli.app import main

main()
