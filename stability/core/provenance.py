"""What a run records about where it ran: package versions, the code's commit and whether the
checkout had uncommitted changes, the host and the device, so a result can be traced to the
code and hardware that produced it. Called once per run: every probe is quick and git has a
timeout."""
from __future__ import annotations

import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

_PACKAGES = ("nli-stability", "torch", "transformers", "tokenizers", "accelerate", "hydra-core")
_CPUINFO = Path("/proc/cpuinfo")
_GIT_TIMEOUT_S = 5
_CODE = Path(__file__).parent


def environment(device: str) -> dict[str, Any]:
    """Versions, commit and dirtiness, host, and the name of `device` (`str(accelerator.device)`)."""
    info: dict[str, Any] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = None
    info["git_commit"], info["git_dirty"] = git_state(_CODE)
    info["host"] = socket.gethostname()
    info["device_name"] = device_name(device)
    info["cuda"] = _torch_cuda()
    return info


def device_name(device: str) -> str | None:
    """The GPU's name for a cuda device, the CPU model otherwise (None when unknown)."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    return cpu_name() or platform.processor() or None


def cpu_name() -> str | None:
    """The first `model name` of /proc/cpuinfo (Linux); None elsewhere."""
    try:
        lines = _CPUINFO.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return None


def _torch_cuda() -> str | None:
    """The CUDA version torch was built with; None for a CPU build (or without torch)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.version.cuda


def git_state(folder: Path) -> tuple[str | None, bool | None]:
    """The commit of the checkout holding `folder`, and whether its tracked files have
    uncommitted changes (a result of edited code cannot be traced to the commit alone);
    (None, None) outside a checkout."""
    commit = _git(folder, "rev-parse", "HEAD")
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return commit or None, None if commit is None or status is None else status != ""


def _git(folder: Path, *args: str) -> str | None:
    """Stripped stdout of a git command run in `folder`; None when git is absent, slow, or fails."""
    try:
        out = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True,
                             timeout=_GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
