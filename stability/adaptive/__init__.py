"""Adaptive sweeps: `nli-stability train adaptive=precision ...` spends seeds where the answer is
still open, in rounds, each an ordinary multirun of the jobs it decided on (docs/adaptive-sweeps.md).

`command` splits the command line and turns a round's open conditions into multirun command
lines; `goals` holds the goals (what decides a condition, from its runs so far); `sweep` runs the
rounds and keeps the record (`core.adaptiverecord`).
"""
