"""An adaptive sweep's plan and record without training: the seeds of each round, the multiruns
that cover exactly the open conditions, the settings' checks, and the record that a rerun
continues from or refuses."""
from __future__ import annotations

import itertools
import json

import pytest

from stability.adaptive.command import parse, products
from stability.core.adaptiverecord import (OPEN, REACHED, AdaptiveRecord, Plan, Round, at_maximum, precision_state,
                                           read_record, start_or_continue, summary_lines, write_record)
from stability.core.errors import UserError
from stability.core.jobs import job_configs


GOAL = {"goal": "precision", "statistic": "overall", "target": 0.1, "confidence": 0.95}


def _plan(**changes) -> Plan:
    values = dict(start=3, step=2, max=8, goal=GOAL,
                  conditions=["en/rte", "fr/rte"], overrides=["lang=en,fr"])
    return Plan(**{**values, **changes})


def test_round_seeds_start_then_step_up_to_the_maximum():
    plan = _plan()
    assert [plan.round_seeds(number) for number in range(1, 6)] == [[0, 1, 2], [3, 4], [5, 6], [7], []]


def _expanded(groups: list[dict[str, list[str]]]) -> list[tuple]:
    return [combo for group in groups for combo in itertools.product(*group.values())]


@pytest.mark.parametrize("keep", [
    {(a, b, c) for a in "xy" for b in "12" for c in "pq"},                     # all: one product
    {("x", "1", "p"), ("y", "2", "q")},                                         # a diagonal: two
    {(a, b, c) for a in "xy" for b in "12" for c in "pq"} - {("y", "2", "q")},  # all but one corner
    {("x", "1", "p")},
])
def test_products_cover_exactly_the_open_conditions(keep):
    rows = [dict(zip("abc", combo)) for combo in sorted(keep)]
    groups = products(rows)
    covered = _expanded(groups)
    assert sorted(covered) == sorted(keep) and len(covered) == len(set(covered))   # each once, nothing else
    if len(keep) == 8:
        assert groups == [{"a": ["x", "y"], "b": ["1", "2"], "c": ["p", "q"]}]


def test_round_commands_name_the_open_conditions_and_the_round_seeds(tmp_path):
    command = parse(["experiment=smoke", "lang=en,fr", "trainer.learning_rate=1e-3,2e-3", "adaptive=precision",
                     f"out={tmp_path}", "hydra/launcher=local_gpus"])
    assert sorted(command.conditions) == ["en/rte", "en/rte/lr0.002", "fr/rte", "fr/rte/lr0.002"]
    assert command.folder == tmp_path and command.hydra == ["hydra/launcher=local_gpus"]
    assert "hydra/launcher=local_gpus" not in command.overrides   # the launcher is no part of the plan
    lines = command.round_commands(["en/rte", "fr/rte/lr0.002"], [3, 4])
    assert len(lines) == 2
    jobs = {(str(cfg.hydra.sweep.subdir), cfg.hydra.launcher._target_.rsplit(".", 1)[-1])
            for line in lines for cfg in job_configs(line)}
    assert {subdir for subdir, _ in jobs} == {"en/rte/seed3", "en/rte/seed4", "fr/rte/lr0.002/seed3",
                                              "fr/rte/lr0.002/seed4"}
    assert len({launcher for _, launcher in jobs}) == 1 and "Joblib" in next(iter(jobs))[1]


@pytest.mark.parametrize("argv, fragment", [
    (["adaptive=precision", "seed=0..5"], "'seed=0..5': an adaptive sweep chooses its seeds"),
    (["adaptive=precision", "adaptive.max=2"], "adaptive.max=2 is below adaptive.start=3"),
    (["adaptive=precision", "adaptive.statistic=median"], "adaptive.statistic='median' is not known"),
    (["adaptive=precision", "adaptive.target=0"], "adaptive.target=0.0 is out of range"),
    (["adaptive=precision", "--cfg", "job"], "an adaptive sweep takes overrides only, not '--cfg'"),
    (["adaptive=precision", "seed_init=0"], "the runs' folder changes with the seed (en/rte at seed 0, "
                                            "en/rte/init0 at seed 1)"),
    # sizes bounded before round 1, with an adaptive sweep's fix (not a fixed sweep's seed=0..1999)
    (["adaptive=precision", "adaptive.start=2500"], "adaptive.start=2500 is out of range: an adaptive sweep gives a "
                                                    "condition at most 100 seeds"),
    (["adaptive=precision", "adaptive.max=300"], "adaptive.max=300 is out of range"),
    (["adaptive=precision", "adaptive.calibration_sims=1"], "pass adaptive.calibration_sims=<a number in [100, 10000]>"),
    (["adaptive=precision", "adaptive.calibration_sims=1000000000"], "adaptive.calibration_sims=1000000000 is out of"),
    # a goal is chosen, never a default one started by a stray key
    (["adaptive.target=0.2"], "'adaptive.target=0.2' without adaptive=<goal>"),
    (["seed=adaptive"], "'seed=adaptive' without adaptive=<goal>: an adaptive sweep's goal is chosen on the command "
                        "line (fix: add adaptive=precision or adaptive=decision"),
    # a fused schedule checked against its blocks before round 1
    (["adaptive=precision", "trainer.fuse_seeds=2"],
     "trainer.fuse_seeds=2 trains en/rte/fused2's seeds in blocks of 2, and adaptive.start=3, adaptive.step=1 would "
     "end a round inside a block (fix: give every round whole blocks: adaptive.start=4 adaptive.step=2 adaptive.max=10"),
])
def test_wrong_adaptive_settings_are_one_line(argv, fragment):
    with pytest.raises(UserError, match="fix: ") as refused:
        parse(["experiment=smoke", *argv])
    assert fragment in str(refused.value)


def test_a_round_larger_than_one_command_is_refused_with_an_adaptive_fix(monkeypatch):
    """The last round trains every condition's seeds so far: `max` seeds of each, at most MAX_JOBS
    jobs (here 10, so one condition shows it)."""
    monkeypatch.setattr("stability.adaptive.command.MAX_JOBS", 10)
    with pytest.raises(UserError, match=r"adaptive.max=11 seeds of 1 condition is a round of 11 jobs, more than the 10 "
                                        r"one command composes .*fix: pass adaptive.max=<at most 10>, or split"):
        parse(["experiment=smoke", "adaptive=precision", "adaptive.max=11"])


def test_a_rerun_continues_from_the_record_and_another_plan_is_refused(tmp_path):
    plan = _plan()
    record, recorded = start_or_continue(tmp_path, plan)
    assert not recorded and read_record(tmp_path) is None   # written once round 1 is about to train
    assert record.next_round() == (1, [0, 1, 2], ["en/rte", "fr/rte"])
    write_record(tmp_path, record)
    decided = record.with_round(Round(1, [0, 1, 2], ["en/rte", "fr/rte"],
                                      {"en/rte": {"state": REACHED, "n_seeds": 3, "width": 0.05},
                                       "fr/rte": {"state": OPEN, "n_seeds": 3, "width": 0.3}}))
    write_record(tmp_path, decided)
    again, recorded = start_or_continue(tmp_path, _plan())
    assert recorded and again == decided and again.next_round() == (2, [3, 4], ["fr/rte"])
    assert summary_lines(again)[-2:] == ["round 1: seeds 0–2 for 2 conditions: 1 open, 1 reached",
                                         "still open (round 2, seeds 3–4): fr/rte"]
    before = (tmp_path / "adaptive.json").read_bytes()
    with pytest.raises(UserError, match=r"another plan \(goal.target: 0.1 -> 0.2\).*fix: rerun it with its own"):
        start_or_continue(tmp_path, _plan(goal={**GOAL, "target": 0.2}))
    assert (tmp_path / "adaptive.json").read_bytes() == before
    assert json.loads(before)["rounds"][0]["decisions"]["fr/rte"]["state"] == OPEN


def test_an_unreadable_record_is_one_line(tmp_path):
    (tmp_path / "adaptive.json").write_text("{", encoding="utf-8")
    with pytest.raises(UserError, match=r"adaptive.json: not a readable adaptive record.*fix: move"):
        read_record(tmp_path)


def test_the_sweep_is_done_when_no_condition_is_open_or_no_seed_is_left():
    closed = AdaptiveRecord(_plan(), [Round(1, [0, 1, 2], ["en/rte", "fr/rte"],
                                            {name: {"state": REACHED} for name in ("en/rte", "fr/rte")})])
    assert closed.next_round() is None and summary_lines(closed)[-1] == "done after 1 round: 2 reached"
    short = _plan(max=3)
    opened = AdaptiveRecord(short, [Round(1, [0, 1, 2], ["en/rte"], {"en/rte": {"state": OPEN}})])
    assert opened.next_round() is None


@pytest.mark.parametrize("width, n_seeds, state", [
    (0.05, 3, REACHED), (0.1, 3, OPEN), (None, 3, OPEN), (float("nan"), 3, OPEN),
    (0.2, 8, "maximum"), (0.05, 8, REACHED), (None, 8, "maximum"),
])
def test_the_precision_rule_closes_below_the_target_or_at_the_maximum(width, n_seeds, state):
    assert at_maximum(precision_state(width, 0.1), n_seeds, 8) == state
