"""`python -m probing`, the same as `nli-stability probe`: see `probing.cli`."""
from probing.cli import main

main()
