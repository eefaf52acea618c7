"""`## Adaptive design`: runs of an adaptive sweep say so, with its goal, its rounds and where each
condition stopped (the sweep's record, `core.adaptiverecord`, in a folder of `runs=`); for a decision
goal the looks taken and the boundaries used, since its comparison is the sequential test, not a
fixed-n one."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from stability.core.adaptiverecord import OPEN, AdaptiveRecord, read_record
from stability.core.markdown import num, table
from stability.core.schemas.adaptive import DECISION
from stability.report.context import Context
from stability.report.section import Built

SPENDING_NAMES = {"obrien-fleming": "O'Brien–Fleming", "pocock": "Pocock"}


def build(context: Context) -> Built | None:
    """None unless a folder of `runs=` holds an adaptive sweep's record."""
    records = [(path, record) for path in context.paths if path.is_dir() and (record := read_record(path))]
    if not records:
        return None
    return Built("## Adaptive design\n\n" + "\n".join(_described(path, record) for path, record in records))


def _described(path: Path, record: AdaptiveRecord) -> str:
    plan = record.plan
    goal = plan.goal
    settings = ", ".join(f"{key} {value}" for key, value in goal.items() if key not in ("goal", "bounds"))
    rounds = [[done.number, ", ".join(map(str, done.seeds)), len(done.ran),
               ", ".join(sorted(name for name in done.ran if done.decisions[name]["state"] != OPEN)) or "–"]
              for done in record.rounds]
    still = record.open_conditions() if record.next_round() is not None else []
    unfinished = f" Not finished: still open for round {len(record.rounds) + 1}: {', '.join(still)}." if still else ""
    detail = _decision_design(record) if goal.get("goal") == DECISION else _precision_design(record)
    return (f"The runs in {path} come from an adaptive sweep: every condition started with {plan.start} seeds and "
            f"got {plan.step} more a round, at most {plan.max}, only while its goal was open (goal "
            f"{goal.get('goal')}: {settings}). Seed counts therefore differ between conditions by design. "
            f"{detail}{unfinished}\n\n"
            + table(["round", "seeds added", "conditions run", "closed in it"], rounds) + "\n"
            + _conditions_table(record))


def _precision_design(record: AdaptiveRecord) -> str:
    return ("Each condition's stopping depended on its own results: the intervals in this report are those of a "
            "fixed design of the seeds each condition ended with; their coverage under this stopping rule is not "
            "simulated in this report.")


def _decision_design(record: AdaptiveRecord) -> str:
    """The looks fixed before round 1, the boundary at each, and how many looks were taken."""
    goal = record.plan.goal
    first, second = goal["compare"]
    bounds = ", ".join(f"{looks}: {num(bound, 2) if bound is not None else '∞'}"
                       for looks, bound in zip(goal["looks"], goal["bounds"]))
    return (f"Per language, {second} was compared with {first} by a group-sequential Welch test (z: its t as the "
            f"normal z with the same two-sided p-value, positive where {second} is higher) at looks fixed before "
            f"round 1, with {SPENDING_NAMES.get(goal['spending'], goal['spending'])} alpha spending (Lan–DeMets, "
            f"two-sided α = {goal['alpha']:g}). Boundaries |z| per look (seeds per arm: bound): {bounds}. "
            f"{len(record.rounds)} of {len(goal['looks'])} looks taken. A pair's decision is this sequential test's "
            "(reject: a boundary crossed; accept: the last look without a crossing), not a fixed-n p-value; each "
            "cell of the statistic is its own test at level α.")


def _cells(decision: dict[str, Any]) -> str:
    return "; ".join(f"{cell['category']} {num(cell['z'], 2)} ({cell['decision']})" for cell in decision["cells"])


def _conditions_table(record: AdaptiveRecord) -> str:
    latest = record.decisions()
    names = [name for name in record.plan.conditions if name in latest]
    if record.plan.goal.get("goal") == DECISION:
        return table(["condition", "against", "seeds", "decision", "last look", "bound at it", "z at it (cell)"],
                     [[name, latest[name]["against"], latest[name]["n_seeds"], latest[name]["state"],
                       latest[name]["look"], num(latest[name]["bound"], 2), _cells(latest[name])] for name in names])
    return table(["condition", "seeds", "stopped", "interval width at the last look"],
                 [[name, latest[name].get("n_seeds", "–"), latest[name]["state"],
                   num(latest[name]["width"]) if latest[name].get("width") is not None else "–"] for name in names])
