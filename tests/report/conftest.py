"""The report tests' shared fixture; the run-writing helpers are in report_runs.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import write_synthetic_runs


@pytest.fixture
def synthetic_runs(tmp_path: Path) -> Path:
    """fr and de, setups rte (n_added 0) and rte+mnli10000, 3 seeds each, 120 items."""
    return write_synthetic_runs(tmp_path)
