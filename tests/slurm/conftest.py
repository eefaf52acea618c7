"""The SLURM test cluster (one per session) for the tests beside this file.

Every test here is marked `slurm` and `slow`; without the SLURM and munge programs, or
without root (the daemons run as root, as in CI), they skip and say how to install them.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from cluster import INSTALL, Cluster, missing_binaries
from slurm_helpers import THREADS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slurm)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[Cluster]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing): {INSTALL}")
    if os.geteuid() != 0:
        pytest.skip("the test cluster's daemons run as root (SlurmUser=root): run the slurm tests as root")
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="slurm-")))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture
def slurm_env(slurm_cluster: Cluster) -> dict[str, str]:
    """What a command needs to submit to the test cluster (the test's cache included)."""
    return {**os.environ, **slurm_cluster.env, **THREADS}

