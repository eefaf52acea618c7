"""`python -m stability.dataqa`, the same as `nli-stability dataqa`: see `stability.dataqa.cli`."""
from stability.dataqa.cli import main

main()
