"""What a run records about where it ran: the commit and uncommitted changes, host and device."""
from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from stability.core.provenance import environment, git_state


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder, check=True,
                   capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository with one committed file and a subfolder, as the package sits in one."""
    git(tmp_path, "init", "-q")
    (tmp_path / "tracked.py").write_text("x = 1\n")
    (tmp_path / "pkg").mkdir()
    git(tmp_path, "add", "tracked.py")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_clean_checkout_is_not_dirty_and_untracked_files_do_not_count(checkout):
    (checkout / "pkg" / "untracked.txt").write_text("notes\n")
    commit, dirty = git_state(checkout / "pkg")
    assert dirty is False
    assert commit is not None and len(commit) == 40


def test_a_modified_tracked_file_makes_it_dirty(checkout):
    (checkout / "tracked.py").write_text("x = 2\n")
    assert git_state(checkout / "pkg")[1] is True


def test_outside_a_checkout_both_are_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))   # no repository above tmp_path either
    assert git_state(tmp_path) == (None, None)


def test_the_environment_of_a_cpu_run():
    info = environment("cpu")
    for key in ("python", "torch", "git_commit", "git_dirty", "host", "device_name", "cuda"):
        assert key in info, key
    assert info["host"] == socket.gethostname()
    assert info["git_dirty"] in (True, False, None)
    assert info["git_dirty"] is None or info["git_commit"]


def test_the_cpu_name_is_that_of_proc_cpuinfo():
    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in
             (cpuinfo.read_text().splitlines() if cpuinfo.is_file() else []) if line.startswith("model name")]
    if not names:
        pytest.skip("no 'model name' in /proc/cpuinfo on this machine")
    assert environment("cpu")["device_name"] == names[0]


def test_a_cuda_device_is_named_by_torch(monkeypatch):
    """No GPU in the tests: torch's answer is stood in for, the device passed on as given."""
    torch = pytest.importorskip("torch")
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: asked.append(device) or "NVIDIA H100 80GB HBM3")
    assert environment("cuda:1")["device_name"] == "NVIDIA H100 80GB HBM3"
    assert asked == [torch.device("cuda:1")]
