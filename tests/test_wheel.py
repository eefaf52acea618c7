"""A cluster user installs a wheel, not the repository: the configs must travel inside it."""
from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.slow
def test_wheel_installs_and_runs_the_smoke_experiment_outside_the_repository(tmp_path):
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
          "--wheel-dir", str(wheels)], tmp_path)
    (wheel,) = wheels.glob("nli_stability-*.whl")

    # a fresh venv that sees this environment's dependencies but not its (editable) project:
    # a path in a .pth file is put on sys.path without running that folder's own .pth files
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    fresh_site = Path(_run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                           tmp_path).stdout.strip())
    (fresh_site / "_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    located = _run([str(python), "-c", "import stability; print(stability.__file__)"], elsewhere, env)
    assert located.stdout.strip().startswith(str(fresh_site))   # the installed copy, not the repo
    _run([str(python), "-m", "stability.train", "experiment=smoke"], elsewhere, env)
    for seed in (0, 1):
        assert (elsewhere / "outputs" / "smoke" / "en" / "rte" / f"seed{seed}" / "metrics.json").is_file()
    # the console script of [project.scripts], with the configs the wheel ships
    _run([str(venv / "bin" / "nli-stability"), "generate", "lang=fr", "suite=logic", "n=2", "out=suites"],
         elsewhere, env)
    assert (elsewhere / "suites" / "fr-logic-n2-seed0.jsonl").is_file()
