"""One failing job does not sink a sweep: the others finish, the end names each failure, exit 1."""
from __future__ import annotations

import pytest
from helpers import QUICK, QUICK_VARIANT, builtin_release, runs, train_cli

from stability.core.jobrecord import DONE, FAILED, read_job_record


@pytest.mark.parametrize("launcher", [["hydra/launcher=basic"],
                                      ["hydra/launcher=local_gpus", "hydra.launcher.n_jobs=2"]],
                         ids=["basic", "joblib"])
@pytest.mark.slow
def test_a_broken_language_fails_its_jobs_only(tmp_path, launcher):
    root = builtin_release(tmp_path / "data", ["en", "fr"], broken="fr")
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "data.source=files", f"data.root={root}", "lang=en,fr", "seed=0",
                        f"paths.output_dir={out}", *launcher], tmp_path)

    assert result.returncode == 1, result.stderr
    # the English run finished and the sweep table was printed
    variant = f"{QUICK_VARIANT}_source-files"
    assert sorted(runs(out)) == [f"smoke/en/rte/{variant}/seed0"]
    assert "Results in" in result.stdout
    # the summary, last on stderr: the failed run's folder and its one-line error
    french = out / "smoke" / "fr" / "rte" / variant / "seed0"
    heading, line = result.stderr.strip().splitlines()[-2:]
    assert heading == "1 of 2 jobs failed:", result.stderr
    assert line.startswith(f"  {french}: error: {root}/French/TERRa/train_fr.jsonl:65: malformed JSON (")
    assert line.endswith(")") and "(fix: " in line
    assert read_job_record(french).state == FAILED
    english = out / "smoke" / "en" / "rte" / variant / "seed0"
    assert read_job_record(english).state == DONE
