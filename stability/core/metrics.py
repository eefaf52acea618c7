"""Diagnostic metrics exactly as docs/design.md, "Metrics", defines them: the one place MCC is computed.

MCC is computed from the 2x2 confusion counts so that the "undefined -> 0.0, degenerate"
rule is explicit rather than hidden in a library warning. The formula works elementwise on
arrays of counts: a run's categories and the bootstrap's samples × seeds × categories use
the same code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES


def mcc_defined(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Where MCC is defined: no factor of its denominator is zero."""
    return (np.asarray(tp + fp) > 0) & (np.asarray(tp + fn) > 0) & (np.asarray(tn + fp) > 0) \
        & (np.asarray(tn + fn) > 0)


def mcc_from_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Elementwise Matthews correlation from confusion counts; 0.0 where it is undefined."""
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    numerator = tp * tn - fp * fn
    denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    defined = mcc_defined(tp, fp, fn, tn)
    out[defined] = numerator[defined] / np.sqrt(denominator[defined])
    return out


def kappa_defined(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Where Cohen's κ is defined: chance agreement below 1, i.e. not both raters constant on one label."""
    return (np.asarray(tp + fp + fn) > 0) & (np.asarray(fp + fn + tn) > 0)


def kappa_from_counts(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Elementwise Cohen's κ of two binary raters from their 2 × 2 table; 0.0 where it is undefined.

    The counts are those of `confusion(a, b)`: tp = both 1, fp = a 0 / b 1, fn = a 1 / b 0,
    tn = both 0, so κ is a count-based score like `mcc_from_counts` (the multi-bootstrap takes
    either). κ = (p_o − p_e) / (1 − p_e) with p_e the agreement expected from the two raters'
    label shares. Two raters that give one and the same label everywhere agree fully by chance
    (p_e = 1): κ is undefined there and scored 0.0, like a degenerate MCC.
    """
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    defined = kappa_defined(tp, fp, fn, tn)
    safe_n = np.where(n > 0, n, 1.0)
    observed = (tp + tn) / safe_n
    expected = ((tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)) / safe_n ** 2
    out = np.zeros(np.broadcast(observed, expected).shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (observed - expected) / (1.0 - expected)
    out[defined] = np.broadcast_to(ratio, out.shape)[defined]
    return out


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's κ of two binary label vectors; None when undefined (both constant on one label)."""
    counts = confusion(a, b)
    return float(kappa_from_counts(*counts)) if kappa_defined(*counts) else None


def confusion(gold: Sequence[int], pred: Sequence[int]) -> tuple[int, int, int, int]:
    """(tp, fp, fn, tn) with label 1 as the positive class (MCC is symmetric in the choice)."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"{g.size} gold labels but {p.size} predictions")
    return int((p & g).sum()), int((p & ~g).sum()), int((~p & g).sum()), int((~p & ~g).sum())


def mcc(gold: Sequence[int], pred: Sequence[int]) -> float | None:
    """MCC of binary labels; None when undefined (callers record the category as degenerate)."""
    counts = confusion(gold, pred)
    return float(mcc_from_counts(*counts)) if mcc_defined(*counts) else None


@dataclass
class DiagnosticScores:
    """Everything metrics.json reports about one run's diagnostic predictions."""

    overall_mcc: float
    mean_category_mcc: float
    category_mcc: dict[str, float]
    category_n: dict[str, int]
    coarse_mcc: dict[str, float]
    coarse_n: dict[str, int]
    degenerate: list[str] = field(default_factory=list)


def score_diagnostic(gold: Sequence[int], pred: Sequence[int],
                     categories: Sequence[Sequence[str]], coarse: Sequence[Sequence[str]]
                     ) -> DiagnosticScores:
    """Category, coarse and overall MCC; undefined MCC scores 0.0 and is listed as degenerate."""
    degenerate: list[str] = []

    def scored(name: str, members: list[int]) -> float:
        value = mcc([gold[i] for i in members], [pred[i] for i in members])
        if value is None:
            degenerate.append(name)
            return 0.0
        return value

    fine_members: dict[str, list[int]] = {name: [] for name in FINE_CATEGORIES}
    coarse_members: dict[str, list[int]] = {name: [] for name in COARSE_CATEGORIES}
    for i, (item_fine, item_coarse) in enumerate(zip(categories, coarse, strict=True)):
        for name in item_fine:
            fine_members[name].append(i)
        for name in item_coarse:
            coarse_members[name].append(i)
    category_mcc = {name: scored(name, members) for name, members in fine_members.items()}
    coarse_mcc = {name: scored(name, members) for name, members in coarse_members.items()}
    overall = scored("overall", list(range(len(gold))))
    return DiagnosticScores(
        overall_mcc=overall,
        mean_category_mcc=sum(category_mcc.values()) / len(category_mcc),
        category_mcc=category_mcc,
        category_n={name: len(m) for name, m in fine_members.items()},
        coarse_mcc=coarse_mcc,
        coarse_n={name: len(m) for name, m in coarse_members.items()},
        degenerate=degenerate,
    )


def accuracy(gold: Sequence[int], pred: Sequence[int]) -> float:
    """Share of equal labels (validation accuracy, the early-stopping criterion)."""
    if not len(gold):
        return 0.0
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)


def majority_share(labels: Sequence[int]) -> float:
    """Share of the most frequent label: the accuracy of always answering it."""
    if not len(labels):
        return 0.0
    return float(np.bincount(np.asarray(labels, dtype=np.int64)).max() / len(labels))
