"""Many runs: the plan (runs and GPU-hours), GPU placement and packing of parallel jobs
(`devices`), the sweep's results table, SLURM without an accounting database (`slurm`,
`squeue`), and what became of each run of a sweep (`status`).

May import `stability.core`, `stability.data` and `stability.finetune.distributed`.
"""
