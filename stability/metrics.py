"""Diagnostic metrics exactly as DESIGN.md section 4 defines them.

MCC is computed from the 2x2 confusion counts so that the "undefined -> 0.0, degenerate"
rule is explicit rather than hidden in a library warning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from stability.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES


def mcc_from_counts(tp: int, tn: int, fp: int, fn: int) -> float | None:
    """Matthews correlation; None when a factor of the denominator is zero (undefined)."""
    denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if denominator == 0:
        return None
    return (tp * tn - fp * fn) / math.sqrt(denominator)


def mcc(gold: Sequence[int], pred: Sequence[int]) -> float | None:
    """MCC of binary labels (label 1 as the positive class; MCC is symmetric in the choice)."""
    tp = tn = fp = fn = 0
    for g, p in zip(gold, pred, strict=True):
        if g == 1:
            tp += p == 1
            fn += p != 1
        else:
            fp += p == 1
            tn += p != 1
    return mcc_from_counts(tp, tn, fp, fn)


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
    if not gold:
        return 0.0
    return sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
