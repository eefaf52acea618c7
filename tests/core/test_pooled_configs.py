"""Seeds of one condition share one config: a user preset edited between two commands into one
folder keeps the runs' folder (their variant is named against the preset as composed now), so only
the composed configs tell the two apart. `train` refuses to add seeds of the new config before
anything trains, `report` refuses to pool runs of two configs, and an adaptive sweep recorded under
the old preset is another plan; each in one line naming the key, exit status 2, nothing written."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from helpers import folder_files, refused
from stability.adaptive.command import parse
from stability.adaptive.goals import goal_of
from stability.adaptive.sweep import plan_of
from stability.core.adaptiverecord import OPEN, AdaptiveRecord, Round, write_record
from stability.core.errors import UserError
from stability.core.runmatch import condition_config, condition_differences
from stability.core.runrecord import RunDir, semantic_config
from stability.report.collect import collect

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "smoke_main_041fde0" / "smoke"
SMOKE = Path(__file__).resolve().parents[2] / "stability" / "conf" / "experiment" / "smoke.yaml"
DIFFERENCE = "trainer.learning_rate: 0.001 -> 0.002"


def test_a_preset_edited_between_two_commands_into_one_folder_is_refused_by_train_report_and_adaptive(
        tmp_path, capsys):
    """The fixture's seeds 0 and 1 are the runs of the user's preset `mine` as it first was (the smoke
    preset's settings); the user then edits its learning rate. Nothing composed `mine` in this process
    before the edit, so its commands here compose it as a new process would."""
    conf, out = tmp_path / "conf", tmp_path / "out"
    shutil.copytree(FIXTURE, out)
    (conf / "experiment").mkdir(parents=True)
    edited = SMOKE.read_text(encoding="utf-8").replace("learning_rate: 1.0e-3", "learning_rate: 2.0e-3")
    (conf / "experiment" / "mine.yaml").write_text(edited, encoding="utf-8")
    base = [f"hydra.searchpath=[file://{conf}]", "experiment=mine", f"out={out}"]
    adaptive = [*base, "adaptive=precision", "adaptive.start=2", "adaptive.max=3"]
    # an adaptive sweep whose round 1 (seeds 0 and 1) was composed from the preset as it was: its plan
    # holds the config those runs have
    command = parse(adaptive)
    then = condition_config(semantic_config(RunDir(out / "en" / "rte" / "seed0").read_config_values()))
    plan = dataclasses.replace(plan_of(command, goal_of(command.settings)), configs={"en/rte": then})
    write_record(out, AdaptiveRecord(plan, [Round(1, [0, 1], ["en/rte"], {"en/rte": {"state": OPEN, "n_seeds": 2}})]))
    before = folder_files(out)

    more = refused(capsys, "train", *base, "seed=2..3")   # the only difference: the rest of `mine` is what they ran
    assert (f"{out / 'en' / 'rte'}: the finished runs seed0, seed1 there were trained with another config than this "
            f"sweep's en/rte runs ({DIFFERENCE})") in more and "force=true" in more and "out=<another folder>" in more
    resumed = refused(capsys, "train", *adaptive)
    assert f"adaptive.json: the adaptive sweep recorded there has another plan (en/rte {DIFFERENCE})" in resumed
    assert folder_files(out) == before   # nothing trained, nothing recorded

    # a seed of the new config beside them (as commands before this check left one): the report refuses
    seed2 = out / "en" / "rte" / "seed2"
    shutil.copytree(out / "en" / "rte" / "seed1", seed2)
    config = seed2 / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("learning_rate: 0.001", "learning_rate: 0.002"),
                      encoding="utf-8")
    metrics = json.loads((seed2 / "metrics.json").read_text(encoding="utf-8"))
    (seed2 / "metrics.json").write_text(json.dumps({**metrics, "seed": 2}), encoding="utf-8")
    runs = ",".join(str(out / "en" / "rte" / f"seed{seed}") for seed in (0, 1))
    with pytest.raises(UserError, match=f"3 runs of en / rte were trained with 2 configs: seed0 and seed2 differ in "
                                        f"{DIFFERENCE} .*fix: report each config's runs apart, e.g. "
                                        rf"runs=\[{runs}\]"):
        collect([out])
    assert "were trained with 2 configs" in refused(capsys, "report", f"runs={out}", f"out={tmp_path / 'report'}",
                                                    "bootstrap=0", "figures=false")
    assert not (tmp_path / "report").exists()


def test_seeds_may_differ_in_seeds_locations_extra_sets_and_bookkeeping_only():
    """What `condition_config` leaves out: the seeds (and the seed_init / seed_order that follow
    them), the experiment's name, data locations, the evaluation batch size, the extra evaluation
    sets and languages and bookkeeping (out, W&B, weights, dynamics); any other value differs."""
    run = {"seed": 0, "seed_init": 0, "seed_order": 0, "experiment_name": "a", "out": "x",
           "logger": {"name": "none"}, "data": {"root": "/v1", "extra_eval": [], "max_length": 256,
                                                "eval_langs": ["fr"]},
           "trainer": {"learning_rate": 1e-3, "eval_batch_size": 128, "save_model": False}}
    other = {"seed": 3, "seed_init": 3, "seed_order": 3, "experiment_name": "b", "out": "y",
             "logger": {"name": "wandb"}, "data": {"root": "/v2", "extra_eval": [{"name": "x"}], "max_length": 256,
                                                   "eval_langs": ["fr", "de"]},
             "trainer": {"learning_rate": 1e-3, "eval_batch_size": 64, "save_model": True}}
    shared = [condition_config(semantic_config(values)) for values in (run, other)]
    assert condition_differences(*shared) == []
    other["data"]["max_length"] = 128
    assert condition_differences(condition_config(semantic_config(run)),
                                 condition_config(semantic_config(other))) == ["data.max_length: 256 -> 128"]

