"""End to end: a smoke sweep that saved its weights, probed; MiniLM on the French release."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from forked_cli import run_module
from helpers import QUICK, QUICK_VARIANT, train_cli
from probe_helpers import probe_cli

from probing.cka import linear_cka
from stability.core.probetable import PROBING_COLUMNS, read_probing_table

TASKS = {"Logic", "Lexical Semantics", "Predicate-Argument Structure"}
# the sweep below changes max_epochs, max_train_samples and max_eval_samples against the smoke preset
TUNED = f"fine-tuned:rte/{QUICK_VARIANT.replace('ntrain32', 'ntrain64')}_neval60"


@pytest.mark.slow
def test_smoke_sweep_probed_then_reported(tmp_path):
    out = tmp_path / "outputs"
    # all 64 built-in training pairs (fewer leave a task with one class), 60 of the 83 diagnostic items
    trained = train_cli([*QUICK, "data.max_train_samples=64", "data.max_eval_samples=60", "seed=0..1",
                         "trainer.save_model=true", f"paths.output_dir={out}"], tmp_path)
    assert trained.returncode == 0, trained.stderr
    # no other option: lang, data source and limits, and the model come from the runs' config.yaml
    probed = probe_cli([f"runs={out / 'smoke'}"], tmp_path)
    assert probed.returncode == 0, probed.stderr
    folder = out / "smoke" / "probing"
    assert list(pd.read_csv(folder / "probing.csv").columns) == PROBING_COLUMNS
    table = read_probing_table(folder / "probing.csv")
    encoders = table.assign(seed=table["seed"].astype("object").where(table["seed"].notna(), None))
    assert {(m, s) for m, s in zip(encoders["model"], encoders["seed"])} == \
        {("pretrained", None), (TUNED, 0), (TUNED, 1)}
    for _, rows in encoders.groupby(["model", encoders["seed"].astype(str)]):
        assert set(rows["task"]) == TASKS     # the tiny BERT: 2 layers + embeddings, every task
        assert sorted(rows["layer"]) == sorted([0, 1, 2] * 3)
    assert (table["selectivity"] - (table["test_acc"] - table["control_acc"])).abs().max() < 1e-12
    # the probe reads the runs' data settings: 60 diagnostic items, not the built-in set's 83
    assert (table["n_test"] == 60).all() and (table["n_train"] == 64).all()
    # model=tiny has no pretrained weights: its pretrained row is the random initialisation
    pretrained = table[table["model"] == "pretrained"]
    assert (pretrained["test_acc"] == pretrained["random_init_acc"]).all()
    figures = sorted(path.name for path in folder.glob("probing_*.png") if path.name != "probing_cka_layers.png")
    assert figures == ["probing_Lexical_Semantics.png", "probing_Logic.png",
                       "probing_Predicate-Argument_Structure.png"]
    page = (folder / "probing.md").read_text(encoding="utf-8")
    assert all(f"]({name})" in page for name in figures) and f"{TUNED} (mean ± σ)" in page
    seeds = pd.read_csv(folder / "probing_seeds.csv")
    assert (seeds["n_seeds"] == 2).all() and len(seeds) == 9
    assert (folder / "probe.log").is_file() and (folder / ".hydra" / "config.yaml").is_file()
    # CKA across seeds: each value is linear_cka of two encoders' cached features of the 60 scored pairs
    pairs = pd.read_csv(folder / "probing_cka_pairs.csv")
    assert len(pairs) == 3 * 3 and set(pairs["comparison"]) == {"seed_vs_seed", "seed_vs_pretrained"}
    cached = []
    for path in sorted((tmp_path / "cache" / "probing").glob("*.npz")):
        with np.load(path) as saved:
            if saved["u"].shape[1] == 60:
                cached.append(np.concatenate([saved["u"], saved["v"]], axis=2))
    for (_, a, b), rows in pairs.groupby(["model", "seed_a", "seed_b"]):
        values = rows.sort_values("layer")["cka"].to_numpy()
        candidates = [[linear_cka(x[layer], y[layer]) for layer in range(3)] for x in cached for y in cached]
        assert any(np.allclose(values, candidate, rtol=1e-9) for candidate in candidates), (a, b)
    summary = pd.read_csv(folder / "probing_cka.csv")
    assert len(summary) == 3 * 2 and (folder / "probing_cka_layers.png").is_file()
    assert len(pd.read_csv(folder / "probing_cka_layers.csv")) == 9
    assert "## Representation similarity across seeds" in page and "probing_cka_layers.png" in page

    # other probe settings: every split of every encoder comes from the feature cache
    again = probe_cli([f"runs={out / 'smoke'}", "probe.pair_features=uv_diff_prod",
                       "probe.bootstrap=0", f"out={tmp_path / 'again'}"], tmp_path)
    assert again.returncode == 0, again.stderr
    log = again.stdout + again.stderr
    assert log.count("from the feature cache") == 9 and " encoded" not in log

    report = run_module("stability.report", [f"runs={out / 'smoke'}", "bootstrap=0", "figures=false",
                                             "calibration_sims=0", f"out={tmp_path / 'report'}"], Path.cwd())
    assert report.returncode == 0, report.stderr
    section = (tmp_path / "report" / "report.md").read_text(encoding="utf-8").split("## Probing")[1]
    assert section.count(f"| {TUNED} |") == 3 and section.count("| pretrained |") == 3


@pytest.mark.slow
def test_minilm_on_the_french_release(shared_data, minilm_folder, tmp_path):
    result = probe_cli(["lang=fr", f"data.root={shared_data}", f"model.name={minilm_folder}",
                        "data.max_train_samples=80", "data.max_eval_samples=60", "probe.bootstrap=0",
                        "data.max_length=64",   # the release's test pairs run to 256 tokens: 4x the forward cost
                        "probe.tasks=[Logic,Lexical Semantics]", f"out={tmp_path / 'probing'}"], tmp_path)
    assert result.returncode == 0, result.stderr
    table = read_probing_table(tmp_path / "probing" / "probing.csv")
    # (in 140 French pairs every one has a Predicate-Argument Structure feature: one class, no task)
    assert set(table["model"]) == {"pretrained"} and set(table["task"]) == {"Logic", "Lexical Semantics"}
    assert sorted(table["layer"].unique()) == list(range(7))     # embeddings + 6 layers
    assert (table["n_train"] == 80 + 60).all() and (table["n_test"] == 60).all()   # train + validation
    assert "held-out (picks L2): test (60 pairs)" in (tmp_path / "probing" / "probing.md").read_text()
