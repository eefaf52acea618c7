"""`## Adaptive design`: runs of an adaptive sweep say so, with its goal, its rounds and where each
condition stopped (the sweep's record, `core.adaptiverecord`, in a folder of `runs=`)."""
from __future__ import annotations

from pathlib import Path

from stability.core.adaptiverecord import AdaptiveRecord, read_record
from stability.core.markdown import num, table
from stability.report.context import Context
from stability.report.section import Built


def build(context: Context) -> Built | None:
    """None unless a folder of `runs=` holds an adaptive sweep's record."""
    records = [(path, record) for path in context.paths if path.is_dir() and (record := read_record(path))]
    if not records:
        return None
    return Built("## Adaptive design\n\n" + "\n".join(_described(path, record) for path, record in records))


def _described(path: Path, record: AdaptiveRecord) -> str:
    plan = record.plan
    goal = plan.goal
    settings = ", ".join(f"{key} {value}" for key, value in goal.items() if key != "goal")
    rounds = [[done.number, ", ".join(map(str, done.seeds)), len(done.ran),
               ", ".join(sorted(name for name in done.ran if done.decisions[name]["state"] != "open")) or "–"]
              for done in record.rounds]
    latest = record.decisions()
    conditions = [[name, latest[name].get("n_seeds", "–"), latest[name]["state"],
                   num(latest[name]["width"]) if latest[name].get("width") is not None else "–"]
                  for name in plan.conditions if name in latest]
    still = record.open_conditions() if record.next_round() is not None else []
    unfinished = f" Not finished: still open for round {len(record.rounds) + 1}: {', '.join(still)}." if still else ""
    return (f"The runs in {path} come from an adaptive sweep: every condition started with {plan.start} seeds and "
            f"got {plan.step} more a round, at most {plan.max}, only while its goal was open (goal "
            f"{goal.get('goal')}: {settings}). Seed counts therefore differ between conditions by design, "
            f"and each condition's stopping depended on its own results: the intervals in this report are those of "
            f"a fixed design of the seeds each condition ended with; their coverage under this stopping rule is "
            f"not simulated in this report.{unfinished}\n\n"
            + table(["round", "seeds added", "conditions run", "closed in it"], rounds) + "\n"
            + table(["condition", "seeds", "stopped", "interval width at the last look"], conditions))
