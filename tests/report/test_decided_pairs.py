"""A pair of conditions an adaptive sweep's decision goal compared gets no fixed-n p-value in the
report (its seeds were added until the sequential test decided): the comparison's bootstrap p, the
comparison tests and the stabilisers' Welch test of the means are left out for it, each with the
sentence that says why; the same runs without the sweep's record get all three (so the check can fail)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from report_runs import write_synthetic_runs
from test_stabilizers import REFERENCE, write_runs

from stability.adaptive.goals import DecisionGoal
from stability.core.adaptiverecord import AdaptiveRecord, Plan, Round, record_path, write_record
from stability.core.schemas.adaptive import Adaptive
from stability.report.cli import main
from stability.report.collect import collect

WITHHELD = "were compared by an adaptive sweep's group-sequential test"
COMPARED = ["rte", "rte+mnli10000"]
METHODS = [f"rte/{REFERENCE}", "rte/trainer-mosbach"]


def _write_record(root: Path, compare: list[str]) -> None:
    """A decision record in `root` whose one look is at every seed of its runs."""
    runs = collect([root]).runs
    names = [f"{lang}/{setup}/{variant}".rstrip("/") for lang, setup, variant in
             zip(runs["lang"], runs["setup"], runs["variant"])]
    arms = {name: [Path(source) for source, own in zip(runs["source"], names) if own == name] for name in set(names)}
    seeds = len(next(iter(arms.values())))
    goal = DecisionGoal(Adaptive(goal="decision", compare=compare, start=seeds, max=seeds))
    plan = Plan(seeds, 1, seeds, goal.settings(), sorted(arms), [])
    write_record(root, AdaptiveRecord(plan, [Round(1, list(range(seeds)), sorted(arms), goal.decide(1, arms))]))


def _report(root: Path, out: Path, *options: str) -> str:
    main([f"runs={root}", f"out={out}", "calibration_sims=0", "random_state=1", "figures=false", *options])
    return (out / "report.md").read_text(encoding="utf-8")


def test_the_comparison_of_a_decided_pair_has_no_fixed_n_p_values(tmp_path):
    root = write_synthetic_runs(tmp_path)
    compare = f"compare=[{','.join(COMPARED)}]"
    free = _report(root, tmp_path / "free", compare, "bootstrap=50")
    assert WITHHELD not in free and "| p (Δ ≤ 0) |" in free
    assert (tmp_path / "free" / "delta_tests.csv").is_file()
    assert pd.read_csv(tmp_path / "free" / "bootstrap_deltas.csv")["p_delta_le_0"].notna().all()

    _write_record(root, COMPARED)
    page = _report(root, tmp_path / "decided", compare, "bootstrap=50")
    tests = page.split("## Tests: rte+mnli10000 − rte\n\n", 1)[1].split("\n## ", 1)[0]
    assert tests.startswith(f"rte+mnli10000 and rte {WITHHELD}") and "Holm" in tests and "| " not in tests
    comparison = page.split("## Comparison: rte+mnli10000 vs rte", 1)[1].split("\n## ", 1)[0]
    assert WITHHELD in comparison and "p (Δ ≤ 0)" not in comparison and "multi-bootstrap CI" in comparison
    assert not (tmp_path / "decided" / "delta_tests.csv").exists()
    boot = pd.read_csv(tmp_path / "decided" / "bootstrap_deltas.csv")
    assert boot["p_delta_le_0"].isna().all() and boot["ci_low"].notna().all()
    assert "## Adaptive design" in page


def test_the_stabilisers_give_no_welch_p_of_the_means_of_a_decided_pair(tmp_path):
    root = write_runs(tmp_path / "runs", methods=(REFERENCE, "trainer-mosbach"), langs=("fr",))
    record = record_path(root)
    free = _report(root, tmp_path / "free")
    table = pd.read_csv(tmp_path / "free" / "stabilizers.csv")
    compared = table[table["method"] == "trainer-mosbach"]
    assert WITHHELD not in free and compared[["p_mean", "p_variance"]].notna().all().all()

    _write_record(root, METHODS)
    assert record.is_file()
    page = _report(root, tmp_path / "decided")
    table = pd.read_csv(tmp_path / "decided" / "stabilizers.csv")
    compared = table[table["method"] == "trainer-mosbach"]
    assert compared[["p_mean", "p_mean_holm"]].isna().all().all() and compared["p_variance"].notna().all()
    section = page.split("## Which method stabilises what", 1)[1].split("\n## ", 1)[0]
    assert f"rte/trainer-mosbach and rte/{REFERENCE} {WITHHELD}" in section and "`p_mean`" in section
