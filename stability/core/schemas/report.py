"""The options of `nli-stability report` (`stability/conf/report.yaml`), checked when composed.

`runs` and `dataqa` take one path or a list (`runs=outputs/smoke`, `runs=[a,b.csv]`) and are
normalised to lists of strings here, so the report reads `list[str]` whichever was written.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from stability.core.errors import UserError
from stability.core.schemas.checks import EXAMPLE, above, at_least, seed, within


# the reference method of "Which method stabilises what": the study's own recipe (trainer=jiant_superglue)
REFERENCE = "trainer-jiant-superglue"
# The most simulated studies per world the calibration runs: its time and memory grow with them
# (10,000: half a minute and 0.8 GB for two runs on a CPU, where 100,000 took 3 minutes and 5 GB), and
# 10,000 already measures a coverage to ±0.6 percentage points.
CALIBRATION_SIMS_MAX = 10_000


def _pair(example: str) -> Any:
    """An optional key of exactly two entries; its fixes show `example`."""
    return field(default=None, metadata={EXAMPLE: example})


@dataclass
class ReportSchema:
    """Every key of report.yaml; the YAML comments say what each changes."""

    runs: Any = None
    out: str = MISSING
    compare: Optional[List[str]] = _pair("[rte,rte+mnli10000]")
    delta_mcc: float = 0.1
    delta_std: float = -0.05
    bootstrap: int = 1000
    confidence: float = 0.95
    random_state: int = 0
    cluster: str = "sentences"
    flip_top: int = 20
    figures: bool = True
    html: bool = True
    failed_margin: float = 0.0
    constant_share: float = 1.0
    exclude_failed: bool = False
    consistency_pair: Optional[List[str]] = _pair("[fr,de]")
    dataqa: Any = None
    compare_langs: Optional[List[str]] = _pair("[fr,sv]")
    aso: bool = False
    aso_iterations: int = 100
    power_delta: float = 0.1
    reference: str = REFERENCE
    calibration_sims: int = 500

    def __post_init__(self) -> None:
        self.runs = path_list("runs", self.runs)
        if not self.runs:
            raise UserError("runs is empty: nothing to report",
                            fix="pass runs=DIR (an output folder of nli-stability train, or a tidy CSV), or runs=[DIR,FILE.csv]")
        self.dataqa = path_list("dataqa", self.dataqa)
        at_least("bootstrap", self.bootstrap, 0)
        if not str(self.cluster).strip():
            raise UserError("cluster is empty", fix="pass cluster=sentences (the default), cluster=none or the "
                                                    "name of a column of the diagnostic records")
        within("confidence", self.confidence, 0, 1, open_low=True)
        seed("random_state", self.random_state)
        at_least("flip_top", self.flip_top, 1)
        within("constant_share", self.constant_share, 0.5, 1, closed_high=True)
        at_least("aso_iterations", self.aso_iterations, 1)
        above("power_delta", self.power_delta, 0)
        within("calibration_sims", self.calibration_sims, 0, CALIBRATION_SIMS_MAX, closed_high=True)
        for pair in (f for f in fields(self) if EXAMPLE in f.metadata):
            value = getattr(self, pair.name)
            if value is not None and len(value) != 2:
                raise UserError(f"{pair.name} needs exactly 2 entries, got {len(value)}",
                                fix=f"pass e.g. {pair.name}={pair.metadata[EXAMPLE]}")
        if self.compare_langs is not None and self.compare_langs[0] == self.compare_langs[1]:
            raise UserError(f"compare_langs names {self.compare_langs[0]} twice",
                            fix="pass two languages, e.g. compare_langs=[fr,sv]")


def path_list(key: str, value: Any) -> list[str]:
    """One path or a list of paths as a list of strings (None: empty)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    if isinstance(value, str):
        return [value]
    raise UserError(f"{key}={value!r} is not a path", fix=f"pass {key}=PATH or {key}=[PATH,PATH]")


def register(store: ConfigStore) -> None:
    store.store(name="report_schema", node=ReportSchema)
