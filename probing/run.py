"""One probing run: encoders → cached layer features → probes and controls → tables, figures, page."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from probing import figures, markdown
from probing.data import load_diagnostic, load_probe_splits
from probing.encoders import (
    EncoderSpec,
    ProbePlan,
    check_available,
    encoder_fingerprint,
    load_encoder,
    plan_from_runs,
    plan_without_runs,
)
from probing.features import pair_features, pair_vectors
from probing.probe import ProbeScores, probe_kfold, probe_with_heldout
from probing.seeds import prediction_key, probe_intervals, seed_stability
from probing.recorded import recorded_runs
from probing.settings import ProbeSettings, probe_settings
from probing.similarity import CKA_LAYER_FILE, CKA_PAIR_FILE, CKA_SUMMARY_FILE, Similarity, cka_rows, similarity
from probing.tasks import Task, TaskSet, annotator_tasks, gold_tasks
from stability.core.atomic import atomic_path, atomic_write_text
from stability.core.errors import UserError
from stability.core.probetable import PROBING_COLUMNS, write_probing_table
from stability.core.records import Example

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeInputs:
    """The examples of each split, the tasks with their labels, and where they came from."""

    examples: dict[str, list[Example]]
    tasks: TaskSet
    describe: dict[str, str]     # split -> which files, for probing.md


def probe_inputs(cfg: DictConfig, settings: ProbeSettings) -> ProbeInputs:
    """Read the splits and label the tasks; tasks that cannot be probed are dropped with a note."""
    if settings.labels == "gold":
        diagnostic = load_diagnostic(cfg)
        return ProbeInputs({"test": diagnostic}, gold_tasks(diagnostic, settings.min_positives),
                           {"test": f"diagnostic set, stratified {settings.folds}-fold (fold i scored, "
                                    f"fold i+1 picks L2, the rest fits)"})
    splits = load_probe_splits(cfg)
    examples = splits.by_name()
    tasks = annotator_tasks(examples, cfg.lang.code, settings.tasks, settings=cfg.annotator)
    for task in list(tasks.tasks):
        if len(np.unique(task.labels["fit"])) < 2:
            tasks.tasks.remove(task)
            tasks.notes.append(f"{task.name}: one class only in the fit split; task dropped")
    if not tasks.tasks:
        raise UserError("no probing task left to fit (see the notes above)",
                        fix="use more training data (data.max_train_samples) or other probe.tasks")
    return ProbeInputs(examples, tasks, {"fit": " + ".join(splits.fit_from), "heldout": splits.heldout_from,
                                         "test": "diagnostic"})


def positive_shares(task: Task, describe: dict[str, str]) -> str:
    """`fit 83 %, held-out 84 %, diagnostic 78 %`: how balanced the task is on each split."""
    names = {"fit": "fit", "heldout": "held-out", "test": "diagnostic"}
    return ", ".join(f"{names[split]} {100 * task.labels[split].mean():.0f} %" for split in describe)


def _labels(inputs: ProbeInputs) -> dict[str, np.ndarray]:
    """(n, tasks) 0/1 labels per split."""
    return {split: np.stack([task.labels[split] for task in inputs.tasks.tasks], axis=1)
            for split in inputs.examples}


@dataclass(frozen=True)
class Probed:
    """One encoder's probe scores, and its scored split's features on the CKA rows (float16;
    None with probe.cka=false)."""

    scores: ProbeScores
    cka_features: np.ndarray | None


def probe_encoder(spec: EncoderSpec, inputs: ProbeInputs, settings: ProbeSettings, cache_dir: Path,
                  cka_rows: np.ndarray) -> Probed:
    """Features of every split (cached), then all probes of this encoder; the scored split's
    features on `cka_rows` are kept for CKA."""
    model, tokenizer = load_encoder(spec)
    key = encoder_fingerprint(model, tokenizer)
    features = {}
    for split, examples in inputs.examples.items():
        vectors = pair_vectors(model, tokenizer, key, examples, settings.max_length, settings.batch_size,
                               cache_dir, settings.device, desc=f"{spec.label}: {split}")
        log.info("[%s] %s: %d pairs × %d layers %s", spec.label, split, len(examples), vectors.n_layers,
                 "from the feature cache" if vectors.cached else "encoded")
        features[split] = pair_features(vectors, settings.pair_features)
    del model
    labels = _labels(inputs)
    started = time.perf_counter()
    if settings.labels == "gold":
        scores = probe_kfold(features["test"], labels["test"], settings.fit, settings.folds)
    else:
        scores = probe_with_heldout(features, labels, settings.fit)
    log.info("[%s] probes of %d tasks × %d layers (and their controls) fitted in %.1f s", spec.label,
             len(inputs.tasks.tasks), scores.test_acc.shape[1], time.perf_counter() - started)
    return Probed(scores, features["test"][:, cka_rows].astype(np.float16) if settings.cka else None)


def table_rows(spec: EncoderSpec, scores: ProbeScores, control: ProbeScores, task_names: list[str]
               ) -> tuple[pd.DataFrame, dict[tuple, np.ndarray]]:
    """probing.csv rows of one encoder, and its test predictions keyed like the rows."""
    rows, predictions = [], {}
    for t, task in enumerate(task_names):
        for layer in range(scores.test_acc.shape[1]):
            rows.append({
                "model": spec.model, "seed": spec.seed, "task": task, "layer": layer,
                "dev_acc": scores.dev_acc[t, layer], "test_acc": scores.test_acc[t, layer],
                "majority_acc": scores.majority_acc[t], "control_acc": scores.control_acc[t, layer],
                "selectivity": scores.test_acc[t, layer] - scores.control_acc[t, layer],
                "random_init_acc": control.test_acc[t, layer], "best_l2": scores.best_l2[t, layer],
                "n_train": scores.n_train, "n_test": scores.n_test,
            })
            predictions[prediction_key(spec.model, spec.seed, task, layer)] = scores.test_pred[t, layer]
    table = pd.DataFrame(rows, columns=PROBING_COLUMNS)
    table["seed"] = table["seed"].astype("Int64")
    return table, predictions


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def probe_plan(cfg: DictConfig, task_overrides: Sequence[str]) -> tuple[DictConfig, ProbePlan]:
    """The config to probe with (with `runs`: the runs' own settings where the command line
    gave none) and the encoders to probe; checks everything but the checkpoints' contents."""
    seed = int(cfg.probe.seed)
    if not cfg.runs:
        return cfg, plan_without_runs(cfg.model, seed)
    recorded = recorded_runs(cfg, task_overrides)
    return recorded.cfg, plan_from_runs(recorded.runs, recorded.cfg.model, seed)


def seed_similarity(plan: ProbePlan, probed: Callable[[EncoderSpec], Probed], out: Path) -> Similarity | None:
    """CKA across the fine-tuned seeds and against the pretrained encoder: its three CSVs and the
    layer × layer figure in `out`; None without fine-tuned encoders."""
    tuned: dict[str, dict[int, np.ndarray]] = {}
    for spec in plan.fine_tuned:
        tuned.setdefault(spec.model, {})[int(spec.seed)] = probed(spec).cka_features
    started = time.perf_counter()
    found = similarity(tuned, probed(plan.pretrained).cka_features)
    if found is None:
        return None
    log.info("linear CKA of %d seed pairs and one layer × layer matrix on %d items in %.1f s",
             len(found.pairs), found.n_items, time.perf_counter() - started)
    for table, name in ((found.summary, CKA_SUMMARY_FILE), (found.pairs, CKA_PAIR_FILE),
                        (found.layers, CKA_LAYER_FILE)):
        _write_csv(table, out / name)
    figures.cka_layers_figure(found.layers, out)
    return found


def run_probing(cfg: DictConfig, plan: ProbePlan) -> Path:
    """Probe every encoder of the plan and write probing.csv, probing_ci.csv, probing_seeds.csv,
    one PNG per task, the CKA tables and figure, and probing.md into `cfg.out`; returns that folder."""
    settings = probe_settings(cfg)
    check_available(plan.pretrained)
    inputs = probe_inputs(cfg, settings)
    for note in inputs.tasks.notes:
        log.warning("%s", note)
    task_names = [task.name for task in inputs.tasks.tasks]
    cache_dir = Path(str(cfg.paths.cache_dir)).expanduser()
    rows_for_cka = cka_rows(len(inputs.examples["test"]), settings.cka_items, settings.fit.seed)
    done: dict[tuple[str, int | None], Probed] = {}

    def probed(spec: EncoderSpec) -> Probed:
        # model=tiny: the pretrained row *is* the random initialisation; probe it once
        if (spec.source, spec.init_seed) not in done:
            done[(spec.source, spec.init_seed)] = probe_encoder(spec, inputs, settings, cache_dir, rows_for_cka)
        return done[(spec.source, spec.init_seed)]

    control = probed(plan.random_init).scores
    tables, predictions = [], {}
    for spec in [plan.pretrained, *plan.fine_tuned]:
        table, preds = table_rows(spec, probed(spec).scores, control, task_names)
        tables.append(table)
        predictions.update(preds)
    rows = pd.concat(tables, ignore_index=True)
    labels = {task: control.test_labels[t] for t, task in enumerate(task_names)}
    out = Path(str(cfg.out))
    out.mkdir(parents=True, exist_ok=True)
    write_probing_table(rows, out)
    intervals = probe_intervals(rows, predictions, labels, settings.bootstrap, settings.confidence,
                                settings.fit.seed)
    _write_csv(intervals, out / "probing_ci.csv")
    seeds = seed_stability(rows, predictions, labels, settings.bootstrap, settings.confidence, settings.fit.seed)
    if not seeds.empty:
        _write_csv(seeds, out / "probing_seeds.csv")
    shares = {task.name: positive_shares(task, inputs.describe) for task in inputs.tasks.tasks}
    pictures = [figures.task_figure(rows, task, f"{cfg.lang.code} · {plan.display_name} · positive pairs: "
                                                f"{shares[task]}", out) for task in task_names]
    similar = seed_similarity(plan, probed, out) if settings.cka else None
    page = markdown.render(markdown.ProbingPage(
        lang=cfg.lang.code, plan=plan, settings=settings, inputs=inputs.describe, n_examples={
            split: len(examples) for split, examples in inputs.examples.items()},
        tasks=inputs.tasks, rows=rows, intervals=intervals, seeds=seeds, figures=pictures,
        shares=shares, similarity=similar))
    atomic_write_text(out / "probing.md", page)
    return out
