"""Experiment tracking for fine-tuning runs: `logger=none` (the run directory is the record)
or `logger=wandb` (Weights & Biases).

May import `stability.core` and, to draw the same heat map as the report, `stability.statistics`.
"""
from stability.tracking.trackers import NoTracker, Tracker, make_tracker

__all__ = ["NoTracker", "Tracker", "make_tracker"]
