"""Run an adaptive sweep round by round, keeping its record (`core.adaptiverecord`).

Before round 1 the plan is written (or, on a rerun, found equal to the recorded one). Each round
trains its conditions at its seeds through `run_round` (the training command itself: an ordinary
multirun on the chosen launcher, whose finished runs are found and skipped), then the goal decides
every condition that ran from all its runs so far, and the round's decisions are written. A round
ends only when every run it asked for is finished: a run another process holds, or a failed job,
stops the sweep before its decisions (the same command again goes on from there). Recorded rounds
are never decided again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from stability.adaptive.command import AdaptiveCommand, parse
from stability.adaptive.goals import goal_of
from stability.core.adaptiverecord import (AdaptiveRecord, Plan, Round, at_maximum, start_or_continue,
                                           summary_lines, write_record)
from stability.core.errors import UserError
from stability.core.markdown import counted
from stability.core.runrecord import RunDir

# one multirun of the training command, from its command line; a failure ends it with SystemExit
RunRound = Callable[[list[str]], None]


def run_adaptive(argv: list[str], run_round: RunRound) -> AdaptiveRecord:
    """The whole adaptive sweep of `argv`, from where its record stands; the final record."""
    command = parse(argv)
    goal = goal_of(command.settings)
    settings = command.settings
    goal.refuse(sorted(command.conditions))
    plan = Plan(settings.start, settings.step, settings.max, goal.settings(), sorted(command.conditions),
                command.overrides)
    record = start_or_continue(command.folder, plan)
    while (upcoming := record.next_round()) is not None:
        number, seeds, conditions = upcoming
        print(f"Adaptive round {number}: seeds {', '.join(map(str, seeds))} for {len(conditions)} of "
              f"{counted(len(plan.conditions), 'condition')}", flush=True)
        for line in command.round_commands(conditions, seeds):
            run_round(line)
        runs = {name: _finished_runs(command, name, seeds[-1] + 1) for name in conditions}
        decisions = goal.decide(number, runs)
        for name, decision in decisions.items():
            decision["state"] = at_maximum(decision["state"], len(runs[name]), plan.max)
        record = record.with_round(Round(number, seeds, conditions, decisions))
        write_record(command.folder, record)
    print("\n".join([f"{command.folder}:", *summary_lines(record)]))
    return record


def _finished_runs(command: AdaptiveCommand, name: str, count: int) -> list[Path]:
    """The run folders of seeds 0..count-1 of a condition, every one finished."""
    folders = [command.conditions[name].run(command.folder, seed) for seed in range(count)]
    for folder in folders:
        if not RunDir(folder).is_finished():
            raise UserError("this round's run is not finished (another process may hold it)", path=folder,
                            fix=f"once it is (nli-stability status runs={command.folder}), run the same command again")
    return folders
