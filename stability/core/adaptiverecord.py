"""The record of an adaptive sweep: its plan, written once round 1 has passed every check and is
about to train, and each round's decisions, written after it (`adaptive.json` in the sweep's folder,
atomically).

The record is what makes an adaptive sweep resumable without re-deciding anything: a rerun of the
same command reads it, takes the decisions of every recorded round as they are, and runs the
first round not yet recorded (whose finished runs training finds and skips). A rerun with another
plan in the same folder is refused: its rounds would mix two designs. Plans are compared by what
they compute, not by how the command line spells them: the seed schedule, the goal, the conditions
and each condition's composed config (`runmatch.condition_config`), so the same overrides in another
order, or `out=` given relatively, are the same plan, and a preset edited since is another. A plan
without a recorded round whose round 1 trained nothing (refused, or every job failed) is replaced by
the new one: no run and no decision was made under it. The report reads the record to say the
design was adaptive; `status` to show the rounds and what is still open.

A decision per condition (lang/setup[/variant]) has a `state`: `OPEN` gets the next round's
seeds, any other of `STATES` closes the condition; the rest of the decision is the goal's own detail
(the interval it decided on). A record is read whole and checked: every round is the one its plan
and the rounds before it make (its number, seeds and conditions), with a known state for each
condition it ran and for nothing else, both arms of a decision goal's pair in one state; anything
else (a hand-edited or damaged file) is one line, never a traceback or a sweep silently closed.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stability.core.atomic import atomic_write_text
from stability.core.errors import UserError
from stability.core.identity import condition_run_subdir
from stability.core.markdown import counted
from stability.core.runmatch import condition_differences
from stability.core.runrecord import RunDir
from stability.core.schemas.adaptive import DECISION, PRECISION

RECORD_FILE = "adaptive.json"
OPEN, REACHED, MAXIMUM = "open", "reached", "maximum"
# a pair's states under the decision goal (`statistics.sequential`'s ACCEPT and REJECT)
ACCEPT, REJECT = "accept", "reject"
STATES = (OPEN, REACHED, MAXIMUM, ACCEPT, REJECT)
# what `status` and the report read of each goal's settings (besides `goal`), checked when read
GOAL_KEYS = {PRECISION: ("statistic", "target", "confidence"),
             DECISION: ("compare", "statistic", "alpha", "spending", "looks", "bounds")}
_MOVE_AWAY = "move {name} away to start the adaptive sweep over, or pass another out="


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
    (its name and settings); the conditions; the sweep's overrides (without seeds and adaptive keys),
    as given; and each condition's composed config (`runmatch.condition_config`; empty in a record
    written before configs were recorded, whose overrides are compared instead)."""

    start: int
    step: int
    max: int
    goal: dict[str, Any]
    conditions: list[str]
    overrides: list[str]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)

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
        """`key: mine -> other's` for each plan entry that differs (the goal's settings key by key,
        the conditions' configs condition by condition); the overrides as written only where a
        plan has no configs to compare."""
        mine, theirs = asdict(self), asdict(other)
        composed = bool(self.configs and other.configs)
        changed = []
        for key in mine:
            if key == "goal":
                changed += [f"goal.{name}: {mine['goal'].get(name)} -> {theirs['goal'].get(name)}"
                            for name in sorted(set(mine["goal"]) | set(theirs["goal"]))
                            if mine["goal"].get(name) != theirs["goal"].get(name)]
            elif key == "configs":
                changed += [f"{name} {line}" for name in self.conditions if name in other.configs and composed
                            for line in condition_differences(self.configs.get(name, {}), other.configs[name])]
            elif mine[key] != theirs[key] and not (key == "overrides" and composed):
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

    def problem(self, expected: tuple[int, list[int], list[str]] | None, goal: str) -> str | None:
        """What is wrong with this round after the rounds before it (`expected`: the round they
        leave to run, `AdaptiveRecord.next_round`), None when nothing is."""
        if expected is None:
            return f"round {self.number} follows a sweep its earlier rounds closed"
        number, seeds, conditions = expected
        if (self.number, self.seeds, self.ran) != (number, seeds, conditions):
            return (f"round {self.number} (seeds {self.seeds}, conditions {self.ran}) is not the plan's round {number} "
                    f"(seeds {seeds}, conditions {conditions})")
        if not isinstance(self.decisions, dict) or set(self.decisions) != set(self.ran):
            names = sorted(set(self.ran) ^ set(self.decisions if isinstance(self.decisions, dict) else ()))
            return f"round {number} does not have one decision for each condition it ran ({', '.join(names)})"
        for name in self.ran:
            decision = self.decisions[name]
            state = decision.get("state") if isinstance(decision, dict) else None
            if state not in STATES:
                return f"round {number}'s decision for {name} has state {state!r}, not one of {', '.join(STATES)}"
        if goal == DECISION:
            return self._pair_problem()
        return None

    def _pair_problem(self) -> str | None:
        """A decision goal closes both arms of a language's pair together: one state per language."""
        states: dict[str, tuple[str, str]] = {}
        for name in self.ran:
            lang, state = name.split("/", 1)[0], self.decisions[name]["state"]
            first = states.setdefault(lang, (name, state))
            if first[1] != state:
                return (f"round {self.number} left {first[0]} {first[1]} and {name} {state}; the decision goal decides "
                        "both arms of a pair together")
        return None


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

    def condition_seeds(self) -> dict[str, list[int]]:
        """The seeds each condition that ran has under the plan: 0 to the last seed of the last round
        that ran it."""
        return {name: list(range(done.seeds[-1] + 1)) for done in self.rounds for name in done.ran}

    def with_round(self, done: Round) -> AdaptiveRecord:
        return AdaptiveRecord(self.plan, [*self.rounds, done])


def record_path(folder: Path) -> Path:
    return Path(folder) / RECORD_FILE


def read_record(folder: Path) -> AdaptiveRecord | None:
    """The record in `folder`; None where there is none. An unreadable or inconsistent one is a UserError."""
    path = record_path(folder)
    if not path.exists():
        return None
    if not path.is_file():
        raise UserError("not a file: the adaptive record must be one", path=path, fix=_MOVE_AWAY.format(name=path.name))
    try:
        return _parsed(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise UserError(f"not a readable adaptive record ({type(err).__name__}: {err})", path=path,
                        fix=_MOVE_AWAY.format(name=path.name)) from None


def _parsed(data: Any) -> AdaptiveRecord:
    """The record `data` holds, each round checked against the plan and the rounds before it; a
    ValueError (or the KeyError or TypeError of a missing or unknown field) where it is not one."""
    plan = Plan(**data["plan"])
    problem = _plan_problem(plan)
    if problem:
        raise ValueError(problem)
    record = AdaptiveRecord(plan)
    for entry in data["rounds"]:
        done = Round(**entry)
        problem = done.problem(record.next_round(), str(plan.goal.get("goal")))
        if problem:
            raise ValueError(problem)
        record = record.with_round(done)
    return record


def _plan_problem(plan: Plan) -> str | None:
    """What makes `plan` no plan a sweep could have written, None when nothing does."""
    counts = (plan.start, plan.step, plan.max)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in counts) or \
            not (2 <= plan.start <= plan.max and plan.step >= 1):
        return f"start {plan.start}, step {plan.step}, max {plan.max}: not a seed schedule"
    if not isinstance(plan.goal, dict) or plan.goal.get("goal") not in GOAL_KEYS:
        return f"goal {plan.goal!r} names none of the goals {', '.join(GOAL_KEYS)}"
    missing = [key for key in GOAL_KEYS[plan.goal["goal"]] if key not in plan.goal]
    if missing:
        return f"the {plan.goal['goal']} goal's settings lack {', '.join(missing)}"
    if plan.goal["goal"] == DECISION and not (_strings(plan.goal["compare"], 2) and isinstance(plan.goal["looks"], list)
                                              and isinstance(plan.goal["bounds"], list)
                                              and len(plan.goal["looks"]) == len(plan.goal["bounds"])):
        return "the decision goal's compare is not two conditions, or its looks and bounds do not pair up"
    if not plan.conditions or not _strings(plan.conditions):
        return f"conditions {plan.conditions!r}: not a list of conditions"
    return None


def _strings(value: Any, length: int | None = None) -> bool:
    """Whether `value` is a list of strings (of `length` of them, when given)."""
    return isinstance(value, list) and all(isinstance(item, str) for item in value) and \
        (length is None or len(value) == length)


def write_record(folder: Path, record: AdaptiveRecord) -> None:
    """Write the record; a folder that cannot take it (read-only, a full disk) is one UserError."""
    path = record_path(folder)
    try:
        atomic_write_text(path, json.dumps(
            {"plan": asdict(record.plan), "rounds": [asdict(done) for done in record.rounds]}, indent=1) + "\n")
    except OSError as err:
        raise UserError(f"cannot write the adaptive record ({err.strerror or type(err).__name__})", path=path,
                        fix="make room on its disk or make the folder writable, then run the same command again: "
                            "every finished run and recorded round is kept") from None


def start_or_continue(folder: Path, plan: Plan) -> tuple[AdaptiveRecord, bool]:
    """The record to go on from, and whether it is the one in `folder` (else it is still to be
    written, once round 1 is about to train): the recorded one when its plan is `plan`, a new one
    where none is recorded or where the recorded plan has no round and its round 1 trained nothing.
    Another plan there is refused, naming what differs."""
    found = read_record(folder)
    if found is None:
        return AdaptiveRecord(plan), False
    changed = found.plan.differences(plan)
    if changed and not found.rounds and not _round_one_trained(folder, found.plan):
        return AdaptiveRecord(plan), False
    if changed:
        raise UserError(f"the adaptive sweep recorded there has another plan ({'; '.join(changed)})",
                        path=record_path(folder),
                        fix="rerun it with its own adaptive settings, overrides and presets to continue it, "
                            "or pass out=<another folder> for a new adaptive sweep")
    return found, True


def _round_one_trained(folder: Path, plan: Plan) -> bool:
    """Whether a run of the plan's round 1 finished after the plan was written (runs already
    there, from a fixed sweep, were not trained by it)."""
    written = record_path(folder).stat().st_mtime_ns
    return any(RunDir(Path(folder) / condition_run_subdir(name, seed)).finished_after(written)
               for name in plan.conditions for seed in plan.round_seeds(1))


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
