"""An adaptive sweep runs, or refuses in one line with a fix that then runs, and leaves nothing a
later run trips over: the plan is recorded only once round 1 is about to train, a plan whose round 1
trained nothing gives way to the next, plans are compared by what they compute (not by how the
command line spells them), a round trains every seed its conditions have so far (a run deleted since
is trained again), a damaged record is one line in every command that reads it, and the report says
when the runs no longer match the record. The rounds here train nothing: `run_round` writes finished
runs by hand (their scores are not the point), so the sweep's own logic is what runs."""
from __future__ import annotations

import dataclasses
import errno
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import one_error_line, refused, unwritable
from stability import cli
from stability.adaptive.command import parse
from stability.adaptive.goals import DecisionGoal, goal_of
from stability.adaptive.sweep import plan_of, run_adaptive
from stability.core import adaptiverecord
from stability.core.adaptiverecord import OPEN, AdaptiveRecord, Round, read_record, record_path, write_record
from stability.core.errors import UserError
from stability.core.schemas.adaptive import Adaptive
from stability.core.runrecord import RunDir, RunRecord
from stability.core.taxonomy import FINE_CATEGORIES, TAXONOMY
from stability.report.collect import collect
from stability.report.sections import adaptive as adaptive_section
from stability.statistics.sequential import ACCEPT, REJECT

CONDITION = "en/rte"
ADAPTIVE = ["experiment=smoke", "adaptive=precision", "adaptive.start=2", "adaptive.max=3",
            "adaptive.calibration_sims=100", "adaptive.target=1e-9"]


def _finished(folder: Path, seed: int, lang: str = "en") -> RunDir:
    """A finished run of `seed` written by hand (scores vary with the seed, so an interval has a width)."""
    run = RunDir(folder / lang / "rte" / f"seed{seed}")
    run.path.mkdir(parents=True, exist_ok=True)
    score = 0.1 + 0.05 * seed
    run.write_record(RunRecord(lang=lang, setup="rte", seed=seed, val_accuracy=0.6, val_majority=0.5,
                               overall_mcc=score, mean_category_mcc=score,
                               category_mcc={name: score for name in FINE_CATEGORIES},
                               category_n={name: 10 for name in FINE_CATEGORIES},
                               coarse_mcc={name: score for name in TAXONOMY},
                               coarse_n={name: 10 for name in TAXONOMY}, n_items=100))
    return run


def _seeds(line: list[str]) -> list[int]:
    return [int(seed) for arg in line if arg.startswith("seed=") for seed in arg[5:].split(",")]


class Rounds:
    """A `run_round` that trains nothing: it calls `ready` (the plan is then recorded) and writes the
    runs of the line's seeds that are not finished; or fails like a sweep whose jobs all failed
    (`fail`); or, from its `stop_at`-th line on, stops like Ctrl-C before anything is checked."""

    def __init__(self, folder: Path, fail: bool = False, stop_at: int | None = None) -> None:
        self.folder, self.fail, self.stop_at, self.lines, self.recorded_first = folder, fail, stop_at, [], []

    def __call__(self, line: list[str], ready=None) -> None:
        if self.stop_at is not None and len(self.lines) + 1 >= self.stop_at:
            raise SystemExit(130)
        self.lines.append(line)
        self.recorded_first.append(record_path(self.folder).exists())
        if ready is not None:
            ready()
        if self.fail:
            raise SystemExit(1)
        for seed in _seeds(line):
            if not RunDir(self.folder / CONDITION / f"seed{seed}").is_finished():
                _finished(self.folder, seed)


def test_a_run_deleted_after_round_one_is_trained_again_by_round_two(tmp_path):
    folder = tmp_path / "sweep"
    argv = [*ADAPTIVE, f"out={folder}"]
    first = Rounds(folder, stop_at=2)
    with pytest.raises(SystemExit):        # round 1 decided and recorded, then stopped before round 2
        run_adaptive(argv, first)
    assert first.recorded_first == [False]   # nothing recorded before round 1 was ready to train
    assert [done.seeds for done in read_record(folder).rounds] == [[0, 1]]
    (folder / CONDITION / "seed1" / "metrics.json").unlink()   # as a report advises for a broken run
    rounds = Rounds(folder)
    final = run_adaptive(argv, rounds)
    assert _seeds(rounds.lines[-1]) == [0, 1, 2]   # the round's seed and every earlier one: seed1 again
    assert RunDir(folder / CONDITION / "seed1").is_finished()
    assert [(done.seeds, done.decisions[CONDITION]["state"]) for done in final.rounds] == [([0, 1], OPEN),
                                                                                           ([2], "maximum")]


def test_a_preset_edited_while_the_sweep_runs_stops_it_before_the_next_round(tmp_path):
    folder, preset = tmp_path / "sweep", tmp_path / "conf" / "experiment" / "mine.yaml"
    preset.parent.mkdir(parents=True)
    text = "# @package _global_\ndefaults:\n  - override /model: tiny\ndata:\n  source: builtin\ntrainer:\n"
    preset.write_text(text + "  learning_rate: 1.0e-3\n")
    rounds = Rounds(folder)

    def edited_after_round_one(line: list[str], ready=None) -> None:
        rounds(line, ready)
        preset.write_text(text + "  learning_rate: 2.0e-3\n")

    argv = [f"hydra.searchpath=[file://{preset.parent.parent}]", "experiment=mine", *ADAPTIVE[1:], f"out={folder}"]
    with pytest.raises(UserError, match="the sweep's configs changed while it ran .*fix: restore the presets"):
        run_adaptive(argv, edited_after_round_one)
    assert len(rounds.lines) == 1 and len(read_record(folder).rounds) == 1   # round 2 trained nothing


def test_a_plan_whose_round_one_trained_nothing_gives_way_and_one_that_trained_is_kept(tmp_path):
    folder = tmp_path / "sweep"
    failing = Rounds(folder, fail=True)
    with pytest.raises(SystemExit):
        run_adaptive([*ADAPTIVE, f"out={folder}", "adaptive.max=4"], failing)   # every job of round 1 fails
    assert read_record(folder).plan.max == 4 and not read_record(folder).rounds
    with pytest.raises(SystemExit):    # the fix of a failed round 1 may change the plan: nothing ran under it
        run_adaptive([*ADAPTIVE, f"out={folder}"], failing)
    assert read_record(folder).plan.max == 3
    written = record_path(folder).stat().st_mtime_ns
    old = _finished(folder, 0)      # a run from before the plan (a fixed sweep's) is no run of its round 1
    os.utime(old.path / "metrics.json", ns=(written - 10**9, written - 10**9))
    plan = read_record(folder).plan
    assert adaptiverecord.start_or_continue(folder, plan)[1]
    changed = dataclasses.replace(plan, max=5)
    assert not adaptiverecord.start_or_continue(folder, changed)[1]   # replaced: round 1 trained nothing
    new = _finished(folder, 1)
    os.utime(new.path / "metrics.json", ns=(written + 10**9, written + 10**9))
    with pytest.raises(UserError, match=r"another plan \(max: 3 -> 5\)"):
        adaptiverecord.start_or_continue(folder, changed)   # round 1 trained seed1: its plan stays


def test_the_same_plan_spelt_otherwise_is_the_same_plan(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spelt = [parse(["experiment=smoke", "trainer.learning_rate=1e-3", "out=sweep", "adaptive=precision",
                    "adaptive.target=0.2"]),
             parse(["adaptive.target=0.2", f"out={tmp_path / 'sweep'}", "trainer.learning_rate=0.001",
                    "adaptive=precision", "experiment=smoke"])]
    first, second = (plan_of(command, goal_of(command.settings)) for command in spelt)
    assert first.overrides != second.overrides and first.differences(second) == []


@pytest.mark.parametrize("damage, problem", [
    (lambda data: data["rounds"][0]["decisions"][CONDITION].pop("state"),
     "round 1's decision for en/rte has state None, not one of open, reached, maximum, accept, reject"),
    (lambda data: data["rounds"][0]["decisions"].pop("fr/rte"),
     "round 1 does not have one decision for each condition it ran (fr/rte)"),
    (lambda data: data["rounds"][0]["decisions"][CONDITION].update(state="closed"),
     "round 1's decision for en/rte has state 'closed'"),
    (lambda data: data["rounds"][0].update(seeds=[0, 1, 2]), "round 1 (seeds [0, 1, 2]"),
    (lambda data: data["plan"].update(start="2"), "start 2, step 1, max 3: not a seed schedule"),
    (lambda data: data["plan"]["goal"].pop("target"), "the precision goal's settings lack target"),
])
def test_a_damaged_record_is_one_line(tmp_path, damage, problem):
    record = AdaptiveRecord(_plan(["en/rte", "fr/rte"]),
                            [Round(1, [0, 1], ["en/rte", "fr/rte"], {name: {"state": OPEN} for name in
                                                                       ("en/rte", "fr/rte")})])
    write_record(tmp_path, record)
    data = json.loads(record_path(tmp_path).read_text())
    damage(data)
    record_path(tmp_path).write_text(json.dumps(data))
    with pytest.raises(UserError, match="adaptive.json: not a readable adaptive record .*fix: move adaptive.json away"
                       ) as refused:
        read_record(tmp_path)
    assert problem in str(refused.value)


def test_one_arm_of_a_decision_closed_and_a_record_that_is_a_folder_are_one_line(tmp_path):
    arms = {"en/rte": {"state": OPEN}, "en/rte/lr0.002": {"state": REJECT}}
    goal = DecisionGoal(Adaptive(goal="decision", compare=["rte", "rte/lr0.002"], start=2, max=3)).settings()
    decision = _plan(list(arms), goal=goal)
    write_record(tmp_path, AdaptiveRecord(decision, [Round(1, [0, 1], list(arms), arms)]))
    with pytest.raises(UserError, match="round 1 left en/rte open and en/rte/lr0.002 reject; the decision goal"):
        read_record(tmp_path)
    assert {ACCEPT, REJECT} <= set(adaptiverecord.STATES)   # the decision goal's states are the record's
    record_path(tmp_path).unlink()
    record_path(tmp_path).mkdir()
    with pytest.raises(UserError, match="adaptive.json: not a file"):
        read_record(tmp_path)


def test_a_damaged_record_is_one_line_in_train_status_and_report(tmp_path, capsys):
    folder = tmp_path / "sweep"
    for seed in (0, 1):
        _finished(folder, seed)
    write_record(folder, AdaptiveRecord(_plan([CONDITION]), [Round(1, [0, 1], [CONDITION], {CONDITION: {}})]))
    before = record_path(folder).read_bytes()
    problem = "not a readable adaptive record (ValueError: round 1's decision for en/rte has state None"
    for command in (["train", *ADAPTIVE, f"out={folder}"], ["status", f"runs={folder}"],
                    ["report", f"runs={folder}", f"out={tmp_path / 'report'}", "bootstrap=0", "figures=false",
                     "calibration_sims=0"]):
        assert problem in refused(capsys, *command)
    assert record_path(folder).read_bytes() == before and not (tmp_path / "report").exists()


def test_a_round_one_refusal_records_nothing_and_an_unwritable_folder_is_one_line(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "sweep"
    folder.mkdir()
    with unwritable(folder), pytest.raises(SystemExit) as stop:
        cli.main(["train", *ADAPTIVE, f"out={folder}"])   # round 1's command refuses: nothing recorded
    assert stop.value.code == 2 and f"cannot write into {folder}" in one_error_line(capsys.readouterr().err)
    assert list(folder.iterdir()) == []

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(adaptiverecord, "atomic_write_text", full)
    with pytest.raises(UserError, match="adaptive.json: cannot write the adaptive record .No space left on device. "
                                        r"\(fix: make room on its disk"):
        write_record(folder, AdaptiveRecord(_plan([CONDITION])))


def test_plan_points_an_adaptive_sweep_at_its_maximum(capsys):
    line = refused(capsys, "plan", "experiment=smoke", "adaptive=precision", "adaptive.max=6")
    assert "adaptive=precision adaptive.max=6 makes an adaptive sweep" in line
    fix = line.split("which no sweep of that plan exceeds: nli-stability ")[1].rstrip(")")
    assert fix == "plan experiment=smoke seed=0..5"
    cli.main(fix.split())   # the fix runs: the six runs of the most seeds
    assert "6 runs" in capsys.readouterr().out


def test_the_report_says_when_the_runs_no_longer_match_the_record(tmp_path):
    """A fixed sweep `seed=0..5` into the folder of an adaptive sweep that gave en/rte 2 seeds."""
    folder = tmp_path / "sweep"
    for seed in range(6):
        _finished(folder, seed)
    record = AdaptiveRecord(_plan([CONDITION]), [Round(1, [0, 1], [CONDITION], {CONDITION: {"state": "reached",
                                                                                           "n_seeds": 2}})])
    context = SimpleNamespace(paths=[folder], adaptive_records=[(folder, record)], collected=collect([folder]),
                              options=SimpleNamespace(calibration_sims=0, random_state=0))
    page = adaptive_section.build(context).markdown
    assert ("**The record no longer matches the runs** (en/rte has seeds 0–5 here, the sweep gave it 0–1)"
            in page)


def _plan(conditions: list[str], goal: dict | None = None) -> adaptiverecord.Plan:
    precision = {"goal": "precision", "statistic": "overall", "target": 0.1, "confidence": 0.95}
    return adaptiverecord.Plan(2, 1, 3, goal or precision, conditions, [])
