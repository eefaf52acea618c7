"""Many runs: command-line overrides (`a..b` ranges), the job configs a sweep expands to,
the plan (runs and GPU-hours), GPU placement of parallel jobs, and the sweep's results table.

May import `stability.core`, `stability.data` and `stability.finetune.distributed`.
"""
