"""`python -m stability.dataqa`: see `stability.dataqa.cli`."""
from stability.dataqa.cli import main

main()
