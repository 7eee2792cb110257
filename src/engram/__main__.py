"""``python -m engram`` runs the command line."""

from engram.interfaces.cli.start import main

main()
