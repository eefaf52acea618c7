"""`python -m stability.report`: see `stability.report.cli`."""
from stability.report.cli import main

main()
