"""Probes with model selection on held-out data only, and the control task.

For every (layer, task) a logistic regression is fitted per L2 strength on the fit split;
the strength with the best held-out accuracy is kept (ties: the stronger one), and only
then is the test split scored. The control task (Hewitt & Liang, 2019) fits the same
probes on labels permuted within the fit split (and selects on labels permuted within
the held-out split); its test accuracy against the real labels is what a probe of this
capacity reaches without the property, and selectivity = task − control accuracy.

All (layer, task, strength, control) problems of one split go into one batched fit
(`probing.fit`).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold

from probing.fit import fit_logistic, standardise

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FitSettings:
    """The L2 grid (strongest first), optimiser limits, the control seed and the device."""

    l2: np.ndarray
    max_iter: int = 100
    tol: float = 1e-4
    seed: int = 0
    device: str = "cpu"

    @classmethod
    def of(cls, l2: list[float], **kwargs) -> FitSettings:
        return cls(np.sort(np.asarray(l2, dtype=np.float64))[::-1].copy(), **kwargs)


@dataclass(frozen=True)
class Selected:
    """Per (layer, task): the chosen strength, its held-out accuracy and test predictions,
    for the task and for its control."""

    best: np.ndarray              # (layers, tasks) index into FitSettings.l2
    dev_acc: np.ndarray           # (layers, tasks)
    test_pred: np.ndarray         # (layers, tasks, n_test) int8
    control_best: np.ndarray      # (layers, tasks)
    control_pred: np.ndarray      # (layers, tasks, n_test) int8


def choose_strength(heldout_acc: np.ndarray) -> np.ndarray:
    """Index of the best held-out accuracy along the last axis; the first (strongest L2) on ties."""
    return np.argmax(heldout_acc, axis=-1)


def permuted_within(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n, tasks) labels with each task's column shuffled: same label counts, no signal."""
    return np.stack([rng.permutation(column) for column in labels.T], axis=1)


def fit_and_select(fit_x: np.ndarray, heldout_x: np.ndarray, test_x: np.ndarray, y_fit: np.ndarray,
                   y_heldout: np.ndarray, settings: FitSettings) -> Selected:
    """Fit task and control probes for every layer and strength, choose on held-out only.

    Features are (layers, n, dims); labels (n, tasks) 0/1.
    """
    rng = np.random.default_rng(settings.seed)
    control_fit, control_heldout = permuted_within(y_fit, rng), permuted_within(y_heldout, rng)
    n_strengths, n_tasks = len(settings.l2), y_fit.shape[1]
    columns = np.repeat(np.concatenate([y_fit, control_fit], axis=1), n_strengths, axis=1)
    started = time.perf_counter()
    x = standardise(fit_x, {"heldout": heldout_x, "test": test_x}, settings.device)
    fitted = fit_logistic(x["fit"], columns, np.tile(settings.l2, 2 * n_tasks),
                          max_iter=settings.max_iter, tol=settings.tol)
    log.debug("fitted %d probes (%d layers × %d tasks and controls × %d strengths) on %d pairs in %.1f s: "
             "%d L-BFGS steps, %d stopped at probe.max_iter", fitted.converged.size, fit_x.shape[0],
             2 * n_tasks, n_strengths, fit_x.shape[1], time.perf_counter() - started, fitted.iterations,
             int((~fitted.converged).sum()))
    shape = (fit_x.shape[0], 2, n_tasks, n_strengths, -1)       # layers, task|control, tasks, strengths, n
    heldout_pred = fitted.predict(x["heldout"]).reshape(shape)
    targets = np.stack([y_heldout.T, control_heldout.T])[None, :, :, None, :]
    heldout_acc = (heldout_pred == targets).mean(axis=-1)        # (layers, 2, tasks, strengths)
    best = choose_strength(heldout_acc)                          # (layers, 2, tasks)
    test_pred = np.take_along_axis(fitted.predict(x["test"]).reshape(shape), best[..., None, None], axis=3)[..., 0, :]
    dev_acc = np.take_along_axis(heldout_acc, best[..., None], axis=3)[..., 0]
    return Selected(best[:, 0], dev_acc[:, 0], test_pred[:, 0], best[:, 1], test_pred[:, 1])


def majority_prediction(y_fit: np.ndarray, n_test: int) -> np.ndarray:
    """(tasks, n_test): every test item gets the fit split's most frequent label of each task."""
    majority = (y_fit.mean(axis=0) > 0.5).astype(np.int8)
    return np.repeat(majority[:, None], n_test, axis=1)


@dataclass(frozen=True)
class ProbeScores:
    """What the table reports for one encoder, per task and layer (arrays are (tasks, layers)).

    `test_pred` and `control_pred` (tasks, layers, n_test) keep the per-item predictions for
    the bootstrap; `best_l2` holds strengths, not indices."""

    dev_acc: np.ndarray
    test_acc: np.ndarray
    control_acc: np.ndarray
    best_l2: np.ndarray
    majority_acc: np.ndarray      # (tasks,)
    test_pred: np.ndarray
    test_labels: np.ndarray       # (tasks, n_test)
    n_train: int
    n_test: int


def _accuracy(pred: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(tasks, layers) accuracy of (tasks, layers, n) predictions against (tasks, n) labels."""
    return (pred == labels[:, None, :]).mean(axis=-1)


def probe_with_heldout(features: dict[str, np.ndarray], labels: dict[str, np.ndarray],
                       settings: FitSettings) -> ProbeScores:
    """Fit on `fit`, choose on `heldout`, score on `test`; labels are (n, tasks) per split."""
    selected = fit_and_select(features["fit"], features["heldout"], features["test"], labels["fit"],
                              labels["heldout"], settings)
    test_labels = labels["test"].T
    test_pred = selected.test_pred.transpose(1, 0, 2)
    majority = majority_prediction(labels["fit"], test_labels.shape[1])
    return ProbeScores(
        dev_acc=selected.dev_acc.T, test_acc=_accuracy(test_pred, test_labels),
        control_acc=_accuracy(selected.control_pred.transpose(1, 0, 2), test_labels),
        best_l2=settings.l2[selected.best.T], majority_acc=(majority == test_labels).mean(axis=1),
        test_pred=test_pred, test_labels=test_labels, n_train=len(labels["fit"]), n_test=test_labels.shape[1])


def probe_kfold(features: np.ndarray, labels: np.ndarray, settings: FitSettings, folds: int) -> ProbeScores:
    """Stratified k-fold on one set (labels=gold): fold i is scored, fold i+1 chooses the
    strength, the rest is fit. Every item is predicted once (out of fold); `best_l2` is the
    strength chosen most often over the folds (ties: the stronger)."""
    n_layers, n_items = features.shape[:2]
    n_tasks = labels.shape[1]
    test_pred = np.zeros((n_tasks, n_layers, n_items), dtype=np.int8)
    control_pred = np.zeros_like(test_pred)
    majority = np.zeros((n_tasks, n_items), dtype=np.int8)
    dev_acc = np.zeros((n_tasks, n_layers))
    choices = np.zeros((n_tasks, n_layers, len(settings.l2)), dtype=np.int64)
    fit_sizes = []
    for task in range(n_tasks):
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=settings.seed)
        fold_of = np.empty(n_items, dtype=np.int64)
        for fold, (_, members) in enumerate(splitter.split(np.zeros(n_items), labels[:, task])):
            fold_of[members] = fold
        for fold in range(folds):
            test, heldout = fold_of == fold, fold_of == (fold + 1) % folds
            fit = ~(test | heldout)
            fit_sizes.append(int(fit.sum()))
            y = labels[:, [task]]
            selected = fit_and_select(features[:, fit], features[:, heldout], features[:, test], y[fit],
                                      y[heldout], settings)
            test_pred[task][:, test] = selected.test_pred[:, 0]
            control_pred[task][:, test] = selected.control_pred[:, 0]
            majority[task, test] = majority_prediction(y[fit], int(test.sum()))[0]
            dev_acc[task] += selected.dev_acc[:, 0] / folds
            choices[task, np.arange(n_layers), selected.best[:, 0]] += 1
    test_labels = labels.T
    return ProbeScores(
        dev_acc=dev_acc, test_acc=_accuracy(test_pred, test_labels),
        control_acc=_accuracy(control_pred, test_labels), best_l2=settings.l2[np.argmax(choices, axis=-1)],
        majority_acc=(majority == test_labels).mean(axis=1), test_pred=test_pred, test_labels=test_labels,
        n_train=int(round(np.mean(fit_sizes))), n_test=n_items)
