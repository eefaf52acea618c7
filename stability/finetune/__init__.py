"""One fine-tuning run: encode → batch → model → training loop → evaluate → write the run record.

May import `stability.core`, `stability.data` and `stability.tracking`; never the commands
or `stability.sweep`/`stability.report`.
"""
