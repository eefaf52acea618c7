"""Run an adaptive sweep round by round, keeping its record (`core.adaptiverecord`).

The plan is found equal to the recorded one, or (where none is recorded, or the recorded one's
round 1 trained nothing) written once round 1's first training command has passed every check and
is about to start: a sweep refused before it trains leaves nothing behind, so the fix its error names
runs. Each round trains its conditions through `run_round` (the training command itself: an ordinary
multirun on the chosen launcher, whose finished runs are found and skipped) at every seed they have
so far, the round's own and the earlier ones (a run deleted since is trained again), then the goal
decides every condition that ran from all its runs so far, and the round's decisions are written.
Before each later round the command line is composed again and must still give the plan: a preset
edited while the sweep runs is refused, not trained beside the seeds so far. A round ends only when
every run it asked for is finished: a run another process holds, or a failed
job, stops the sweep before its decisions (the same command again goes on from there). Recorded
rounds are never decided again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

from stability.adaptive.command import AdaptiveCommand, parse
from stability.adaptive.goals import Goal, goal_of
from stability.core.adaptiverecord import (AdaptiveRecord, Plan, Round, at_maximum, record_path, start_or_continue,
                                           summary_lines, write_record)
from stability.core.errors import UserError
from stability.core.markdown import counted
from stability.core.runlock import read_owner
from stability.core.runrecord import RunDir


class RunRound(Protocol):
    """One multirun of the training command, from its command line; `ready` is called once its checks
    have passed, before its first job starts. A failure ends it with SystemExit."""

    def __call__(self, argv: list[str], ready: Callable[[], None] | None = None) -> None: ...


def run_adaptive(argv: list[str], run_round: RunRound) -> AdaptiveRecord:
    """The whole adaptive sweep of `argv`, from where its record stands; the final record."""
    command = parse(argv)
    goal = goal_of(command.settings)
    goal.refuse(sorted(command.conditions))
    plan = plan_of(command, goal)
    record, recorded = start_or_continue(command.folder, plan)
    first = len(record.rounds) + 1
    while (upcoming := record.next_round()) is not None:
        number, seeds, conditions = upcoming
        if number > first:
            _refuse_edits_since(argv, plan, command.folder)
        print(f"Adaptive round {number}: seeds {', '.join(map(str, seeds))} for {len(conditions)} of "
              f"{counted(len(plan.conditions), 'condition')}", flush=True)
        for line in command.round_commands(conditions, list(range(seeds[-1] + 1))):
            run_round(line, ready=None if recorded else lambda: write_record(command.folder, record))
            recorded = True
        runs = {name: _finished_runs(command, name, seeds[-1] + 1) for name in conditions}
        decisions = goal.decide(number, runs)
        for name, decision in decisions.items():
            decision["state"] = at_maximum(decision["state"], len(runs[name]), plan.max)
        record = record.with_round(Round(number, seeds, conditions, decisions))
        write_record(command.folder, record)
    print("\n".join([f"{command.folder}:", *summary_lines(record)]))
    return record


def plan_of(command: AdaptiveCommand, goal: Goal) -> Plan:
    """The plan of a parsed command line: its seed schedule, goal, conditions, overrides and the
    conditions' composed configs."""
    settings, names = command.settings, sorted(command.conditions)
    return Plan(settings.start, settings.step, settings.max, goal.settings(), names, command.overrides,
                {name: command.conditions[name].config for name in names})


def _refuse_edits_since(argv: list[str], plan: Plan, folder: Path) -> None:
    """The command line composed again gives the plan this process started from: a preset edited
    while the sweep ran would have its next round train another config beside the seeds so far."""
    command = parse(argv)
    changed = plan.differences(plan_of(command, goal_of(command.settings)))
    if changed:
        raise UserError(f"the sweep's configs changed while it ran ({'; '.join(changed)})", path=record_path(folder),
                        fix="restore the presets and configs it started with and run the same command again: the "
                            "recorded rounds are kept")


def _finished_runs(command: AdaptiveCommand, name: str, count: int) -> list[Path]:
    """The run folders of seeds 0..count-1 of a condition, every one finished."""
    folders = [command.conditions[name].run(command.folder, seed) for seed in range(count)]
    for folder in folders:
        if not RunDir(folder).is_finished():
            owner = read_owner(folder)
            why = f"held by {owner}" if owner else "its job left it unfinished"
            raise UserError(f"this round's run is not finished ({why})", path=folder,
                            fix=f"once nothing holds it (nli-stability status runs={command.folder}), run the same "
                                "command again: it trains the round's missing runs")
    return folders
