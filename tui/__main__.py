"""`python -m tui` runs the viva command line."""

from tui.cli import main

main()
