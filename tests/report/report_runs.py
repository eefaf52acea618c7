"""Fake run directories (metrics.json + predictions.jsonl) written from arrays, for the report's tests.

A module of its own, not conftest.py: test folders each have a conftest, and `from conftest
import ...` finds whichever was imported first (pytest 7 imports tests/slurm's first)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from sklearn.metrics import matthews_corrcoef

from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES, TAXONOMY

if TYPE_CHECKING:
    import pandas as pd


def mcc(labels: np.ndarray, preds: np.ndarray) -> float:
    """Reference MCC (sklearn), 0.0 for an empty selection like the rule of docs/design.md."""
    if not len(labels):
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # single-class selections: sklearn warns, returns 0.0
        return float(matthews_corrcoef(labels, preds))


def item_categories(n_items: int) -> list[list[str]]:
    """Two distinct categories per item, cycling so each of the 33 gets about 2·n_items/33 items."""
    return [sorted({FINE_CATEGORIES[i % 33], FINE_CATEGORIES[(i + 1 + (i // 33) % 32) % 33]})
            for i in range(n_items)]


def write_metrics(root: Path, lang: str, setup: str, seed: int, category_mcc: dict[str, float] | Sequence[float],
                  overall_mcc: float, n_added: int = 0, category_n: dict[str, int] | None = None,
                  coarse_mcc: dict[str, float] | None = None, n_items: int = 100) -> Path:
    """A run directory holding only metrics.json, with the given values."""
    if not isinstance(category_mcc, dict):
        category_mcc = dict(zip(FINE_CATEGORIES, map(float, category_mcc)))
    run = root / f"{lang}_{setup}_seed{seed}"
    run.mkdir(parents=True, exist_ok=True)
    metrics = {
        "experiment": "test", "lang": lang, "setup": setup, "seed": seed, "n_train": 2490 + n_added,
        "n_added": n_added, "val_accuracy": 0.6, "overall_mcc": overall_mcc,
        "mean_category_mcc": float(np.mean(list(category_mcc.values()))),
        "category_mcc": category_mcc, "category_n": category_n or {name: 10 for name in category_mcc},
        "coarse_mcc": coarse_mcc or {name: 0.0 for name in TAXONOMY},
        "coarse_n": {name: 10 for name in TAXONOMY}, "n_items": n_items, "degenerate": [],
        "epochs_trained": 3, "best_epoch": 2, "timings": {"train_seconds": 1.0},
    }
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return run


def write_run(root: Path, lang: str, setup: str, seed: int, labels: np.ndarray, preds: np.ndarray,
              categories: list[list[str]], n_added: int = 0) -> Path:
    """A complete run directory whose metrics are computed from the predictions (sklearn MCC)."""
    labels, preds = np.asarray(labels), np.asarray(preds)
    masks = {name: np.array([name in item for item in categories], bool) for name in FINE_CATEGORIES}
    coarse_masks = {coarse: np.array([any(COARSE_OF[c] == coarse for c in item) for item in categories], bool)
                    for coarse in TAXONOMY}
    run = write_metrics(
        root, lang, setup, seed,
        category_mcc={name: mcc(labels[m], preds[m]) for name, m in masks.items()},
        overall_mcc=mcc(labels, preds), n_added=n_added,
        category_n={name: int(m.sum()) for name, m in masks.items()},
        coarse_mcc={name: mcc(labels[m], preds[m]) for name, m in coarse_masks.items()},
        n_items=len(labels),
    )
    with (run / "predictions.jsonl").open("w", encoding="utf-8") as handle:
        for i, (label, pred, cats) in enumerate(zip(labels, preds, categories)):
            handle.write(json.dumps({"idx": str(i), "label": int(label), "pred": int(pred),
                                     "prob_entailment": 0.9 if pred == 0 else 0.1, "categories": cats}) + "\n")
    return run


def noisy_predictions(rng: np.random.Generator, labels: np.ndarray, accuracy: float) -> np.ndarray:
    """Predictions that agree with the labels on a random `accuracy` share of items."""
    return np.where(rng.random(len(labels)) < accuracy, labels, 1 - labels)


def write_dynamics(run: Path, items: "pd.DataFrame", prob_entailment: np.ndarray, pred: np.ndarray,
                   epochs: Sequence[int] | None = None) -> None:
    """Training dynamics in the run directory `run` (written by `write_run`), through the same
    `RunDir` calls training makes: `items` with split, idx, label, premise, hypothesis, categories (lists); one row of
    `prob_entailment` / `pred` per validation (NaN / -1 for training items not seen); the
    train_log gets one line per validation (epochs 1, 2, ... unless given)."""
    from stability.core.runrecord import RunDir

    run_dir = RunDir(run)
    run_dir.start_dynamics(items)
    epochs = list(epochs) if epochs is not None else list(range(1, len(prob_entailment) + 1))
    run_dir.write_train_log([{"epoch": int(epoch), "loss": 0.5, "val_accuracy": 0.6, "seconds": 1.0}
                             for epoch in epochs])
    for number, (prob, labels) in enumerate(zip(prob_entailment, pred), start=1):
        run_dir.write_dynamics_validation(number, prob, labels)


def write_synthetic_runs(tmp_path: Path) -> Path:
    """fr and de, setups rte (n_added 0) and rte+mnli10000, 3 seeds each, 120 items, under `tmp_path`/outputs."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 120)
    categories = item_categories(120)
    root = tmp_path / "outputs"
    for lang in ("fr", "de"):
        for setup, n_added, accuracy in (("rte", 0, 0.65), ("rte+mnli10000", 10000, 0.8)):
            for seed in range(3):
                write_run(root, lang, setup, seed, labels, noisy_predictions(rng, labels, accuracy),
                          categories, n_added=n_added)
    return root
