"""`## Adaptive design`: runs of an adaptive sweep say so, with its goal, its rounds and where each
condition stopped (the sweep's record, `core.adaptiverecord`, in a folder of `runs=`); for a decision
goal the looks taken (named by their seeds per arm) and the boundaries used, since its comparison is
the sequential test, not a fixed-n one. Where the folder's runs of a condition are not the seeds the
sweep gave it (a fixed sweep added seeds later, or a run was deleted), the section says the record no
longer matches the runs: the statistics above it are of the runs, not of the adaptive design."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from stability.core.adaptiverecord import OPEN, AdaptiveRecord, setting_text
from stability.core.markdown import num, table
from stability.core.schemas.adaptive import DECISION
from stability.report.calibration import method_name, percent
from stability.report.context import Context
from stability.report.decision_calibration import measured_text
from stability.report.section import Built
from stability.report.stopping import StoppingCoverage, stopping_coverage

SPENDING_NAMES = {"obrien-fleming": "O'Brien–Fleming", "pocock": "Pocock"}


def build(context: Context) -> Built | None:
    """None unless a folder of `runs=` holds an adaptive sweep's record."""
    if not context.adaptive_records:
        return None
    return Built("## Adaptive design\n\n" + "\n".join(_described(path, record, context)
                                                      for path, record in context.adaptive_records))


def _described(path: Path, record: AdaptiveRecord, context: Context) -> str:
    plan = record.plan
    goal = plan.goal
    settings = ", ".join(f"{key} {setting_text(value)}" for key, value in goal.items()
                         if key not in ("goal", "bounds"))
    rounds = [[done.number, ", ".join(map(str, done.seeds)), len(done.ran),
               ", ".join(sorted(name for name in done.ran if done.decisions[name]["state"] != OPEN)) or "–"]
              for done in record.rounds]
    still = record.open_conditions() if record.next_round() is not None else []
    unfinished = f" Not finished: still open for round {len(record.rounds) + 1}: {', '.join(still)}." if still else ""
    moved = _moved_seeds(path, record, context)
    coverage = {}
    if goal.get("goal") == DECISION:
        calibration = context.calibration
        detail = _decision_design(record) + measured_text(None if calibration is None else calibration.table, record)
    else:
        sims = context.options.calibration_sims
        coverage = stopping_coverage(record, context.all_results, context.failed, sims=sims,
                                     random_state=context.options.random_state) if sims else {}
        coverage = {name: measured for name, measured in coverage.items() if name not in moved}
        detail = _precision_design(record, sims)
    return (f"The runs in {path} come from an adaptive sweep: every condition started with {plan.start} seeds and "
            f"got {plan.step} more a round, at most {plan.max}, only while its goal was open (goal "
            f"{goal.get('goal')}: {settings}). Seed counts therefore differ between conditions by design. "
            f"{detail}{unfinished}{_mismatch(moved)}\n\n"
            + table(["round", "seeds added", "conditions run", "closed in it"], rounds) + "\n"
            + _conditions_table(record, coverage))


def _moved_seeds(path: Path, record: AdaptiveRecord, context: Context) -> dict[str, tuple[list[int], list[int]]]:
    """Per condition whose runs read from `path` are not the seeds the sweep gave it: (the seeds read,
    the sweep's)."""
    runs = context.collected.runs
    under = runs[[Path(source).is_relative_to(path) for source in runs["source"]]]
    read: dict[str, list[int]] = {}
    for lang, setup, variant, seed in zip(under["lang"], under["setup"], under["variant"], under["seed"]):
        read.setdefault("/".join(filter(None, (lang, setup, variant))), []).append(int(seed))
    return {name: (sorted(read.get(name, [])), seeds) for name, seeds in record.condition_seeds().items()
            if sorted(read.get(name, [])) != seeds}


def _seed_list(seeds: list[int]) -> str:
    return "none" if not seeds else f"{seeds[0]}–{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) \
        else ", ".join(map(str, seeds))


def _mismatch(moved: dict[str, tuple[list[int], list[int]]]) -> str:
    """The sentence that the record no longer matches the runs, or ""."""
    if not moved:
        return ""
    listed = "; ".join(f"{name} has seeds {_seed_list(read)} here, the sweep gave it {_seed_list(given)}"
                       for name, (read, given) in moved.items())
    return (f" **The record no longer matches the runs** ({listed}): runs were added or deleted after the sweep, so "
            "the statistics in this report are of the runs read, not of the adaptive design the tables below "
            "describe (its coverage under the stopping rule is not given for those conditions).")


def _precision_design(record: AdaptiveRecord, sims: int) -> str:
    """What the intervals are, and whether their coverage under the stopping rule was simulated."""
    fixed = ("Each condition's stopping depended on its own results: the intervals in this report are those of a "
             "fixed design of the seeds each condition ended with")
    if not sims:
        return fixed + "; their coverage under this stopping rule is not simulated (calibration_sims=0)."
    return (fixed + f". Their coverage under this stopping rule is simulated ({sims} sweeps per world, the "
            "calibration's worlds fitted to each condition's runs, the plan's looks, target and confidence, one "
            "analytic interval at every look): the table's last column is the lowest over the condition's cells "
            "and worlds, against the nominal "
            f"{percent(record.plan.goal['confidence'])}.")


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
            "(reject: a boundary crossed; accept: the last look without a crossing), not a fixed-n p-value; "
            + _cells_level(goal))


def _cells_level(goal: dict[str, Any]) -> str:
    """At which level each cell of the statistic was tested: α shared by the cells (Bonferroni), or, in a
    plan recorded before they shared it, each at α uncorrected."""
    if "cell_alpha" in goal:
        return (f"each of its cells was tested at α / {round(goal['alpha'] / goal['cell_alpha'])} = "
                f"{goal['cell_alpha']:g} (Bonferroni: where each cell's test holds its level, the pair's false \"differ\" "
                "rate is at most α).")
    if goal["statistic"] == "overall":
        return "its one cell, the overall MCC, was tested at α."
    return ("each cell was tested at α, uncorrected (a plan recorded before the cells shared α): the pair's false "
            "\"differ\" rate is that of the family, measured below.")


def _cells(decision: dict[str, Any]) -> str:
    return "; ".join(f"{cell.get('category')} {num(cell.get('z'), 2)} ({cell.get('decision')})"
                     for cell in decision.get("cells") or [] if isinstance(cell, dict)) or "–"


def _look_seeds(goal: dict[str, Any], look: Any) -> Any:
    """A look named by its seeds per arm (look 3 of looks 3, 4, 5 is 5 seeds), not its number."""
    looks = goal.get("looks") or []
    return looks[look - 1] if isinstance(look, int) and 0 < look <= len(looks) else "–"


def _coverage(measured: StoppingCoverage | None) -> str:
    if measured is None:
        return "–"
    return f"{percent(measured.coverage)} ({method_name(measured.method)}, {measured.world} world)"


def _conditions_table(record: AdaptiveRecord, coverage: dict[str, StoppingCoverage]) -> str:
    latest = record.decisions()
    names = [name for name in record.plan.conditions if name in latest]
    if record.plan.goal.get("goal") == DECISION:
        return table(["condition", "against", "seeds", "decision", "last look (seeds per arm)", "bound at it",
                      "z at it (cell)"],
                     [[name, latest[name].get("against", "–"), latest[name].get("n_seeds", "–"), latest[name]["state"],
                       _look_seeds(record.plan.goal, latest[name].get("look")), num(latest[name].get("bound"), 2),
                       _cells(latest[name])] for name in names])
    header = ["condition", "seeds", "stopped", "interval width at the last look"]
    rows = [[name, latest[name].get("n_seeds", "–"), latest[name]["state"],
             num(latest[name]["width"]) if latest[name].get("width") is not None else "–"] for name in names]
    if coverage:
        header.append("coverage under the stopping rule")
        rows = [[*row, _coverage(coverage.get(name))] for row, name in zip(rows, names)]
    return table(header, rows)
