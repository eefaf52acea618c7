"""What a run records about where it ran: package versions and the git commit."""
from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

_PACKAGES = ("nli-stability", "torch", "transformers", "tokenizers", "accelerate", "hydra-core")


def environment() -> dict[str, str | None]:
    """Versions and commit, so a result can be traced to the code that produced it."""
    info: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = None
    info["git_commit"] = _git_commit()
    return info


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None
