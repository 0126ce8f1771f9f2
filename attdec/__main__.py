"""`python -m attdec` runs the CLI."""

from attdec.cli import main

main()
