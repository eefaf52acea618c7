"""The record of an adaptive sweep: its plan, written before round 1, and each round's decisions,
written after it (`adaptive.json` in the sweep's folder, atomically).

The record is what makes an adaptive sweep resumable without re-deciding anything: a rerun of the
same command reads it, takes the decisions of every recorded round as they are, and runs the
first round not yet recorded (whose finished runs training finds and skips). A rerun with another
plan in the same folder is refused: its rounds would mix two designs. The report reads the record
to say the design was adaptive; `status` to show the rounds and what is still open.

A decision per condition (lang/setup[/variant]) has a `state`: `OPEN` gets the next round's
seeds, any other state (`REACHED`, `MAXIMUM`, or a goal's own) closes the condition; the rest of
the decision is the goal's own detail (the interval it decided on).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stability.core.atomic import atomic_write_text
from stability.core.errors import UserError
from stability.core.markdown import counted

RECORD_FILE = "adaptive.json"
OPEN, REACHED, MAXIMUM = "open", "reached", "maximum"


def precision_state(width: float | None, target: float) -> str:
    """The precision goal's rule for one condition at one look: `REACHED` once its interval (the
    widest of its cells; None or NaN where none could be given) is narrower than `target`, else `OPEN`.
    Here, below every goal and simulator, so a simulation of the stopping rule runs this very rule."""
    return REACHED if width is not None and width == width and width < target else OPEN


def at_maximum(state: str, n_seeds: int, maximum: int) -> str:
    """A condition still open with the plan's most seeds is closed: `MAXIMUM`."""
    return MAXIMUM if state == OPEN and n_seeds >= maximum else state


def looks(start: int, step: int, maximum: int) -> list[int]:
    """The seeds per condition at the end of each round (`Plan.round_seeds`): start, start + step, …,
    maximum: the looks a decision goal tests at and a simulation of the precision rule stops at."""
    return [*range(start, maximum, step), maximum]


@dataclass(frozen=True)
class Plan:
    """What is fixed before round 1: seeds to start with, added per round, the most; the goal
    (its name and settings); the conditions; the sweep's overrides (without seeds and adaptive keys)."""

    start: int
    step: int
    max: int
    goal: dict[str, Any]
    conditions: list[str]
    overrides: list[str]

    def round_seeds(self, number: int) -> list[int]:
        """The seeds round `number` (1, 2, ...) adds: 0..start-1, then `step` more a round, up to `max`."""
        if number == 1:
            return list(range(self.start))
        first = self.start + (number - 2) * self.step
        return list(range(first, min(first + self.step, self.max)))

    def looks(self) -> list[int]:
        """The seeds per condition at each round's end: `looks(start, step, max)`."""
        return looks(self.start, self.step, self.max)

    def differences(self, other: Plan) -> list[str]:
        """`key: mine -> other's` for each plan entry that differs (the goal's settings key by key)."""
        mine, theirs = asdict(self), asdict(other)
        changed = []
        for key in mine:
            if key == "goal":
                changed += [f"goal.{name}: {mine['goal'].get(name)} -> {theirs['goal'].get(name)}"
                            for name in sorted(set(mine["goal"]) | set(theirs["goal"]))
                            if mine["goal"].get(name) != theirs["goal"].get(name)]
            elif mine[key] != theirs[key]:
                changed.append(f"{key}: {_short(mine[key])} -> {_short(theirs[key])}")
        return changed


def _short(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value)


@dataclass(frozen=True)
class Round:
    """One round: the seeds it added, the conditions that ran them, and every such condition's decision."""

    number: int
    seeds: list[int]
    ran: list[str]
    decisions: dict[str, dict[str, Any]]

    def still_open(self) -> list[str]:
        return [condition for condition in self.ran if self.decisions[condition]["state"] == OPEN]


@dataclass(frozen=True)
class AdaptiveRecord:
    plan: Plan
    rounds: list[Round] = field(default_factory=list)

    def open_conditions(self) -> list[str]:
        """The conditions the next round runs: all before round 1, then those the last round left open."""
        return list(self.plan.conditions) if not self.rounds else self.rounds[-1].still_open()

    def next_round(self) -> tuple[int, list[int], list[str]] | None:
        """(number, seeds, conditions) of the round to run now; None once none is open or no seed is left."""
        number = len(self.rounds) + 1
        seeds, conditions = self.plan.round_seeds(number), self.open_conditions()
        return (number, seeds, conditions) if seeds and conditions else None

    def decisions(self) -> dict[str, dict[str, Any]]:
        """Each condition's latest decision (a condition closed in round 1 keeps round 1's)."""
        latest: dict[str, dict[str, Any]] = {}
        for done in self.rounds:
            latest.update(done.decisions)
        return latest

    def with_round(self, done: Round) -> AdaptiveRecord:
        return AdaptiveRecord(self.plan, [*self.rounds, done])


def record_path(folder: Path) -> Path:
    return Path(folder) / RECORD_FILE


def read_record(folder: Path) -> AdaptiveRecord | None:
    """The record in `folder`; None where there is none. An unreadable one is a UserError."""
    path = record_path(folder)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return AdaptiveRecord(Plan(**data["plan"]), [Round(**done) for done in data["rounds"]])
    except (ValueError, KeyError, TypeError) as err:
        raise UserError(f"not a readable adaptive record ({type(err).__name__}: {err})", path=path,
                        fix=f"move {path.name} away to start the adaptive sweep over, or pass another out=") from None


def write_record(folder: Path, record: AdaptiveRecord) -> None:
    atomic_write_text(record_path(folder), json.dumps(
        {"plan": asdict(record.plan), "rounds": [asdict(done) for done in record.rounds]}, indent=1) + "\n")


def start_or_continue(folder: Path, plan: Plan) -> AdaptiveRecord:
    """The record to go on from: the one in `folder` when its plan is `plan`, else a new one with
    `plan` written before any round runs. Another plan there is refused, naming what differs."""
    found = read_record(folder)
    if found is None:
        record = AdaptiveRecord(plan)
        write_record(folder, record)
        return record
    changed = found.plan.differences(plan)
    if changed:
        raise UserError(f"the adaptive sweep recorded there has another plan ({'; '.join(changed)})",
                        path=record_path(folder),
                        fix="rerun it with its own adaptive settings and overrides to continue it, "
                            "or pass out=<another folder> for a new adaptive sweep")
    return found


def _seeds(seeds: list[int]) -> str:
    return f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])


def _states(decisions: dict[str, dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for decision in decisions.values():
        counts[decision["state"]] = counts.get(decision["state"], 0) + 1
    return ", ".join(f"{count} {state}" for state, count in sorted(counts.items()))


def setting_text(value: Any) -> str:
    """A goal setting as a line shows it: lists joined, numbers to 6 significant digits."""
    if isinstance(value, list):
        return "[" + ", ".join(setting_text(item) for item in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def summary_lines(record: AdaptiveRecord) -> list[str]:
    """The plan, one line per recorded round, and what is still open (or that the sweep is done)."""
    plan = record.plan
    settings = ", ".join(f"{key} {setting_text(value)}" for key, value in plan.goal.items() if key != "goal")
    lines = [f"Adaptive sweep: goal {plan.goal.get('goal')} ({settings}); {plan.start} seeds to start, "
             f"+{plan.step} a round, at most {plan.max}; {counted(len(plan.conditions), 'condition')}"]
    lines += [f"round {done.number}: seeds {_seeds(done.seeds)} for {counted(len(done.ran), 'condition')}: "
              f"{_states(done.decisions)}" for done in record.rounds]
    upcoming = record.next_round()
    if upcoming is None:
        lines.append(f"done after {counted(len(record.rounds), 'round')}: {_states(record.decisions())}")
    else:
        number, seeds, conditions = upcoming
        lines.append(f"still open (round {number}, seeds {_seeds(seeds)}): {', '.join(conditions)}")
    return lines
