"""`python -m engine` runs the viva command line."""

from engine.cli import main

main()
