"""`python -m probing [overrides]`: layer-wise probes of the runs' encoders (see `probing`).

    python -m probing lang=fr data.root=/data runs=outputs/baseline
    python -m probing lang=en data.source=builtin runs=outputs/smoke     # the smoke sweep
"""
from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from stability.core.config import CONF_DIR, PROBE_CONFIG_NAME
from stability.core.errors import exit_on_user_error
from stability.core.overrides import prepare_argv


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name=PROBE_CONFIG_NAME)
def task(cfg: DictConfig) -> None:
    """One probing run; user errors end it with one line and status 2."""
    from probing.run import run_probing  # heavy imports (torch, transformers) only when it runs

    # inside the job: Hydra would print a UserError reaching it as a traceback, status 1
    out = exit_on_user_error(run_probing)(cfg)
    print(f"wrote probing.csv, probing.md and the figures to {out}")


@exit_on_user_error
def main() -> None:
    sys.argv = [sys.argv[0], *prepare_argv(sys.argv[1:], CONF_DIR)]
    task()


if __name__ == "__main__":
    main()
