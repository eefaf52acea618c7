"""`python -m stability.generate` (= `nli-stability generate`) as a user runs it, and a run's
diagnostic set from a suite."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from forked_cli import run_module

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.data.loading import load_run_data


def generate(*args: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NLI_STABILITY_TRACEBACK", None)
    return run_module("stability.generate", list(args), cwd, env=env, timeout=120)


def test_generate_writes_the_diagnostic_format(tmp_path):
    out = tmp_path / "suites"
    result = generate("lang=fr", "suite=structure", "n=3", "seed=0", f"out={out}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    path = out / "fr-structure-n3-seed0.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # 6 templates × 3 items; the summary line is the command's only output
    assert len(rows) == 18 and result.stdout.strip() == \
        f"wrote 18 items of 6 templates (9 entailment, 9 not_entailment) to {path}"
    assert rows[0]["idx"].startswith("active_passive.entailed:name1=")
    assert rows[0]["predicate-argument-structure"] == "Active/Passive" and rows[0]["label"] == "entailment"
    assert set(rows[0]["features"]) == {"name1.GENDER", "name2.GENDER"}
    # Hydra's own files land beside the suite, not in an outputs/<date> folder
    assert (out / "generate.log").is_file() and (out / ".hydra" / "overrides.yaml").is_file()
    assert not (tmp_path / "outputs").exists()


def test_every_combination_is_nall(tmp_path):
    result = generate("lang=de", "suite=structure", "n=all", f"out={tmp_path}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f"to {tmp_path / 'de-structure-nall-seed0.jsonl'}")


@pytest.mark.parametrize("args, fragment", [
    (["lang=xx"], "unknown lang 'xx'"),
    (["lang=fr", "suite=nope"], "no suite 'nope' for fr"),
    (["lang=fr", "n=0"], "n=0 is not a positive number of items per template"),
    (["lang=fr", "n=-3"], "n=-3 is not a positive number of items per template"),
    (["lang=fr", "seed=one"], "seed='one' is not an integer"),
    (["lang=fr", "size=3"], "unknown key 'size'"),
    (["lang=fr", "out=a.jsonl"], "out=a.jsonl is a file, not a folder"),
])
def test_bad_arguments_give_one_line_and_status_2(tmp_path, args, fragment):
    (tmp_path / "a.jsonl").write_text("", encoding="utf-8")
    result = generate(*args, cwd=tmp_path)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and fragment in lines[0] and "(fix: " in lines[0]
    assert not (tmp_path / "outputs").exists()


def test_the_data_config_offers_generated_suites():
    cfg = compose_config([])
    assert cfg.data.diagnostic is None
    assert (cfg.data.suite.name, cfg.data.suite.n, cfg.data.suite.seed) == ("all", 50, 0)


def test_a_run_scores_a_generated_suite_or_a_suite_file(tmp_path):
    cfg = compose_config(["experiment=smoke", "lang=sv", "data.diagnostic=generated", "data.suite.name=logic",
                          "data.suite.n=4"])
    diagnostic = load_run_data(cfg).diagnostic
    assert len(diagnostic) == 20 * 4                     # 20 logic templates, 4 items each
    assert {e.template for e in diagnostic} >= {"negation.entailed", "temporal.not_entailed"}
    assert generate("lang=sv", "suite=logic", "n=4", f"out={tmp_path}", cwd=tmp_path).returncode == 0
    path = tmp_path / "sv-logic-n4-seed0.jsonl"
    from_file = load_run_data(compose_config(["experiment=smoke", "lang=sv", f"data.diagnostic={path}"])).diagnostic
    assert [(e.idx, e.premise, e.features) for e in from_file] == [(e.idx, e.premise, e.features) for e in diagnostic]


def test_a_diagnostic_path_without_categories_is_a_user_error(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text('{"idx": "0", "premise": "a", "hypothesis": "b", "label": 0}\n', encoding="utf-8")
    with pytest.raises(UserError, match="the diagnostic file has no category fields"):
        load_run_data(compose_config(["experiment=smoke", f"data.diagnostic={path}"]))


def test_a_seed_sweep_writes_one_suite_per_seed_and_ends_cleanly(tmp_path):
    result = generate("lang=fr", "suite=logic", "n=2", "seed=0,1", f"out={tmp_path / 'suites'}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in (tmp_path / "suites").glob("*.jsonl")) == ["fr-logic-n2-seed0.jsonl",
                                                                             "fr-logic-n2-seed1.jsonl"]
