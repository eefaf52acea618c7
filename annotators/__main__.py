"""`python -m annotators`, the same as `nli-stability annotate`: see `annotators.cli`."""
from annotators.cli import main

main()
