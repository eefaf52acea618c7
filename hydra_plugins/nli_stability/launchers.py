"""`hydra/launcher=local_gpus` and `hydra/launcher=slurm`: Hydra's joblib and submitit launchers
with the project's additions (k jobs per device; SLURM without accounting; a fused group of seeds as
one job or array task, `stability.sweep.fused_groups.launch_groups`).

Both extend plugins of the `[launchers]` extra; without it nothing is defined here, so Hydra's
plugin scan (which imports this module in every command) stays quiet.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher

try:
    from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher as SubmititSlurmLauncher
except ImportError:  # the [launchers] extra is not installed
    JoblibLauncher = SubmititSlurmLauncher = None


def _launch_here(launcher: Launcher) -> Callable[[Sequence[Sequence[str]], int], Sequence[JobReturn]]:
    """Hydra's basic launcher with `launcher`'s context: runs jobs in this process."""
    basic = BasicLauncher()
    basic.setup(hydra_context=launcher.hydra_context, task_function=launcher.task_function, config=launcher.config)
    return basic.launch


if JoblibLauncher is not None and SubmititSlurmLauncher is not None:

    class PackedJoblibLauncher(JoblibLauncher):
        """Hydra's joblib launcher; `jobs_per_device` is read by each job (`stability.sweep.devices`)
        from its Hydra config, so joblib itself never sees it."""

        def __init__(self, jobs_per_device: int | None = None, **joblib: Any) -> None:
            super().__init__(**joblib)
            self.jobs_per_device = jobs_per_device

        def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
            """Ctrl-C acts at once: this process only waits, its workers compose the configs."""
            from stability.core.interrupts import allowed
            from stability.sweep.fused_groups import launch_groups

            assert self.config is not None
            with allowed():
                return launch_groups(job_overrides, initial_job_idx, str(self.config.hydra.sweep.dir),
                                     apart=super().launch, here=_launch_here(self))

    class SlurmLauncher(SubmititSlurmLauncher):
        """Hydra's SLURM launcher, following jobs with squeue where sacct fails (`stability.sweep.slurm`)."""

        @staticmethod
        def preflight() -> None:
            """Called by every command before Hydra starts the sweep (`core.command`): no SLURM here is one line."""
            from stability.sweep.slurm import require_slurm

            require_slurm()

        def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
            from stability.core.interrupts import allowed
            from stability.sweep.fused_groups import launch_groups
            from stability.sweep.slurm import launch_watched

            assert self.config is not None
            sweep_dir = str(self.config.hydra.sweep.dir)

            def submitted(overrides: Sequence[Sequence[str]], first_idx: int) -> Sequence[JobReturn]:
                return launch_watched(lambda: super(SlurmLauncher, self).launch(overrides, first_idx), sweep_dir)

            with allowed():  # this process submits and waits; each job composes its config on its node
                return launch_groups(job_overrides, initial_job_idx, sweep_dir, apart=submitted,
                                     here=_launch_here(self))
