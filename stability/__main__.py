"""`python -m stability <command> [overrides]`, the same as `nli-stability`: see `stability.cli`."""
from stability.cli import main

main()
