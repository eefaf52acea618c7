"""The condition pairs whose seeds an adaptive sweep's decision goal chose (`adaptive=decision`,
its record in a folder of `runs=`).

Why the report needs them: the decision goal added seeds to both arms while their comparison was
undecided, so the seed counts depend on the results. A fixed-n p-value of the same pair assumes the
counts were fixed in advance and does not keep its level under that stopping (the naive repeated test
of `statistics.sequential_calibration`); the pair's test is the sequential one in *Adaptive design*.
The sections that test a pair leave out their fixed-n p-values for these pairs and say why.
"""
from __future__ import annotations

from stability.core.adaptiverecord import AdaptiveRecord
from stability.core.schemas.adaptive import DECISION
from stability.report.compare import Condition


def decided_pairs(records: list[AdaptiveRecord]) -> set[frozenset[str]]:
    """The compared pair (condition names as the report writes them) of each decision record."""
    pairs = set()
    for record in records:
        if record.plan.goal.get("goal") == DECISION:
            pairs.add(frozenset(str(Condition.parse(text)) for text in record.plan.goal["compare"]))
    return pairs


def withheld_text(a: str, b: str, what: str) -> str:
    """The sentence a section prints in place of its fixed-n p-values of the decided pair (a, b)."""
    return (f"{b} and {a} were compared by an adaptive sweep's group-sequential test, which added seeds while "
            f"the comparison was undecided: {what} would not keep its level under that stopping, so none is "
            "given for this pair; the decision, with the looks taken and the boundaries, is in *Adaptive design*.")
