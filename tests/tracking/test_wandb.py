"""`logger=wandb`: offline W&B runs grouped per (experiment, lang, setup), read back from disk."""
from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import pytest
from forked_cli import run_module

from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.metrics import score_diagnostic
from stability.core.runrecord import RunDir
from stability.core.schemas.train import train_settings
from stability.core.taxonomy import COARSE_OF
from stability.tracking import make_tracker
from stability.tracking.wandb_run import (
    group_metrics,
    resolve_dir,
    resolve_mode,
    summary_values,
)

pytestmark = pytest.mark.slow   # a module fixture trains or reports for tens of seconds

REPO = Path(__file__).resolve().parents[2]
_BLOCK, _HEADER = 32768, 7  # the .wandb file: LevelDB-log blocks of protobuf Records
_FULL, _LAST = 1, 4


def _records(path: Path):
    """The protobuf records of a .wandb file (wandb 0.31 ships no Python reader for it)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, chunk = _HEADER, b""
    while pos + _HEADER <= len(data):
        if _BLOCK - pos % _BLOCK < _HEADER:  # a block's tail too short for a header is padding
            pos += _BLOCK - pos % _BLOCK
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + _HEADER])
        chunk += data[pos + _HEADER:pos + _HEADER + length]
        pos += _HEADER + length
        if kind in (_FULL, _LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(chunk)
            yield record
            chunk = b""


def _items(items) -> dict:
    """Record items as a dict; media items come as nested keys (`table` → `nrows`, `path`, ...)."""
    out: dict = {}
    for item in items:
        *parents, last = item.nested_key or [item.key]
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = json.loads(item.value_json)
    return out


def _read_run(run_dir: Path) -> dict:
    """Run record, config, per-step history and merged summary of one offline run."""
    (wandb_file,) = run_dir.glob("run-*.wandb")
    out: dict = {"history": [], "summary": {}, "config": {}}
    for record in _records(wandb_file):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            out["run"] = record.run
            out["config"].update(_items(record.run.config.update))
        elif kind == "config":
            out["config"].update(_items(record.config.update))
        elif kind == "history":
            out["history"].append(_items(record.history.item))
        elif kind == "summary":
            out["summary"].update(_items(record.summary.update))
    return out


# a stabilisation method (trainer=mosbach) names the group and is in the config
VARIANT = "model-tiny_trainer-mosbach_ep2_patience2_source-builtin"


@pytest.fixture(scope="module")
def offline_runs(tmp_path_factory) -> dict[int, dict]:
    """Two seeds of a tiny French run on the built-in data with logger=wandb, offline, recording
    the training dynamics (which change neither the group nor the variant)."""
    tmp = tmp_path_factory.mktemp("wandb")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp / "wandb_dir"),
           "WANDB_CONFIG_DIR": str(tmp / "config"), "WANDB_CACHE_DIR": str(tmp / "cache"),
           "WANDB_DATA_DIR": str(tmp / "data"), "NLI_STABILITY_CACHE": str(tmp / "nli_cache")}
    env.pop("WANDB_API_KEY", None)
    result = run_module("stability.train", [
        "model=tiny", "trainer=mosbach", "logger=wandb", "data.source=builtin", "lang=fr", "seed=0..1",
        "trainer.max_epochs=2", "trainer.patience=2", "trainer.dynamics=true", f"paths.output_dir={tmp / 'out'}"],
        REPO, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    run_dirs = sorted((tmp / "wandb_dir" / "wandb").glob("offline-run-*"))
    assert len(run_dirs) == 2
    runs = {}
    for run_dir in run_dirs:
        run = _read_run(run_dir)
        run["dir"] = run_dir
        run["run_dir"] = tmp / "out" / "default" / "fr" / "rte" / VARIANT / f"seed{run['config']['seed']}"
        run["metrics"] = json.loads((run["run_dir"] / "metrics.json").read_text())
        runs[run["config"]["seed"]] = run
    return runs


def test_runs_are_grouped_per_setup(offline_runs):
    for seed, run in offline_runs.items():
        # one group per (experiment, lang, setup, variant): the tiny model, 2 epochs, ... against
        # the default experiment's mBERT on the released files make this run a variant
        assert run["run"].run_group == f"default/fr/rte/{VARIANT}"
        assert run["run"].display_name == f"fr-rte-{VARIANT}-seed{seed}"
        assert run["run"].job_type == "train"
        assert {"default", "fr", "rte", "tiny-bert"} <= set(run["run"].tags)
        assert run["run"].project == "nli-stability"


def test_config_is_the_resolved_run_config(offline_runs):
    config = offline_runs[1]["config"]
    assert config["lang"]["code"] == "fr" and config["seed"] == 1 and config["setup"] == "rte"
    assert config["model"]["name"] == "tiny-bert" and config["logger"]["name"] == "wandb"
    # the method, so a dashboard groups by it: the trainer option and the keys it sets
    assert config["choices"]["trainer"] == "mosbach" and config["trainer"]["schedule"] == "linear"


def test_history_has_loss_and_accuracy_per_epoch(offline_runs):
    epochs = [step for step in offline_runs[0]["history"] if "loss" in step]
    assert len(epochs) == 2
    assert all({"epoch", "loss", "val_accuracy", "epoch_seconds"} <= set(step) for step in epochs)


def test_history_has_the_learning_curves_of_a_dynamics_run(offline_runs):
    """Each validation logs the diagnostic MCCs: those of the predictions the run recorded then."""
    for run in offline_runs.values():
        epochs = [step for step in run["history"] if "loss" in step]
        dynamics = RunDir(run["run_dir"]).read_dynamics()
        items = dynamics.items.iloc[dynamics.columns("diagnostic")]
        coarse = [tuple(dict.fromkeys(COARSE_OF[name] for name in names)) for names in items["categories"]]
        for step, pred in zip(epochs, dynamics.pred[:, dynamics.columns("diagnostic")]):
            scores = score_diagnostic(items["label"].tolist(), pred.tolist(), list(items["categories"]), coarse)
            assert step["diagnostic_mcc/overall"] == pytest.approx(scores.overall_mcc)
            for name, value in {**scores.coarse_mcc, **scores.category_mcc}.items():
                assert step[f"diagnostic_mcc/{name}"] == pytest.approx(value), name


def test_summary_holds_the_final_metrics(offline_runs):
    for run in offline_runs.values():
        summary, metrics = run["summary"], run["metrics"]
        for key in ("overall_mcc", "mean_category_mcc", "val_accuracy"):
            assert summary[key] == pytest.approx(metrics[key])
        assert summary["category_mcc/Negation"] == pytest.approx(metrics["category_mcc"]["Negation"])
        assert summary["coarse_mcc/Logic"] == pytest.approx(metrics["coarse_mcc"]["Logic"])


def test_category_table_and_heat_map(offline_runs):
    run = offline_runs[1]
    table = run["summary"]["category_mcc_table"]
    assert table["_type"] == "table-file" and table["nrows"] == 33
    content = json.loads((run["dir"] / "files" / table["path"]).read_text())
    assert content["columns"] == ["category", "coarse", "n_items", "mcc"]
    assert ["Negation", "Logic"] == content["data"][19][:2]
    image = run["summary"]["category_seed_heatmap"]
    assert image["_type"] == "image-file" and (run["dir"] / "files" / image["path"]).is_file()
    # seed 1 ran after seed 0 and found it beside its own run directory
    assert image["caption"] == f"default/fr/rte/{VARIANT}: seeds 0, 1"


def test_mode_is_offline_without_a_key():
    assert resolve_mode(None, {}) == "offline"
    assert resolve_mode(None, {"WANDB_API_KEY": "x"}) == "online"
    assert resolve_mode(None, {"WANDB_API_KEY": "x", "WANDB_MODE": "offline"}) == "offline"
    assert resolve_mode("disabled", {"WANDB_MODE": "online"}) == "disabled"
    with pytest.raises(UserError, match="unknown logger.mode 'cloud'"):
        resolve_mode("cloud", {})


def test_dir_defaults_to_the_run_directory(tmp_path):
    assert resolve_dir(None, tmp_path, {}) == tmp_path
    assert resolve_dir(None, tmp_path, {"WANDB_DIR": "/elsewhere"}) == Path("/elsewhere")
    assert resolve_dir("/chosen", tmp_path, {"WANDB_DIR": "/elsewhere"}) == Path("/chosen")


def test_missing_package_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # makes `import wandb` fail
    with pytest.raises(UserError, match=r"pip install 'nli-stability\[wandb\]'"):
        make_tracker(train_settings(compose_config(["logger=wandb"])), {}, tmp_path)


def _metrics(seed: int, setup: str = "rte", mcc: float = 0.5) -> dict:
    return {"experiment": "baseline", "lang": "de", "setup": setup, "seed": seed,
            "category_mcc": {"Negation": mcc}}


def test_heat_map_takes_finished_seeds_of_the_same_group(tmp_path):
    group = tmp_path / "baseline" / "de" / "rte"
    for seed, metrics in ((1, _metrics(1)), (2, _metrics(2, setup="rte+mnli_all"))):
        (group / f"seed{seed}").mkdir(parents=True)
        (group / f"seed{seed}" / "metrics.json").write_text(json.dumps(metrics))
    (group / "seed3").mkdir()
    (group / "seed3" / "metrics.json").write_text("{broken")
    (group / "seed0").mkdir()
    (group / "seed0" / "metrics.json").write_text(json.dumps(_metrics(0, mcc=-1.0)))  # an older run of seed 0
    runs = group_metrics(group / "seed0", _metrics(0))
    assert [(m["seed"], m["category_mcc"]["Negation"]) for m in runs] == [(0, 0.5), (1, 0.5)]


def test_summary_flattens_nested_numbers():
    summary = summary_values({"lang": "fr", "overall_mcc": 0.2, "category_mcc": {"Negation": 0.1},
                              "environment": {"python": "3.11"}, "degenerate": ["Datives"]})
    assert summary == {"overall_mcc": 0.2, "category_mcc/Negation": 0.1, "degenerate": ["Datives"]}
