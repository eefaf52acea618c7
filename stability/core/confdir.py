"""Where the packaged Hydra configs live: inside the package (`stability/conf`), so a wheel has
them too. A module of its own so that `config` (which registers the resolvers, some of them
`identity`'s) and `identity` (which composes an experiment's defaults) both name the folder
without importing each other."""
from __future__ import annotations

from pathlib import Path

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
