"""Helpers of the probing tests: synthetic layer features and the command line."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
from forked_cli import run_module

N_HIDDEN_LAYERS = 3


def one_informative_layer(rng: np.random.Generator, n: int, n_layers: int, dims: int, signal_layer: int,
                          labels: np.ndarray) -> np.ndarray:
    """(layers, n, dims) Gaussian noise; at `signal_layer` the first dimension also carries
    the label (±1.5 standard deviations apart), so only that layer can be probed."""
    features = rng.standard_normal((n_layers, n, dims))
    features[signal_layer, :, 0] += 3.0 * (labels - 0.5)
    return features.astype(np.float32)


def probe_cli(args: list[str], cwd: Path, timeout: int = 1800) -> subprocess.CompletedProcess:
    """`python -m probing ARGS` as a user runs it (offline, short errors)."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "HF_HUB_OFFLINE": "1"}
    env.pop("NLI_STABILITY_TRACEBACK", None)
    return run_module("probing", args, cwd, env=env, timeout=timeout)
