"""Without the `stats` extra (deepsig) the dominance module imports, tells the report ASO is
absent, and a call fails as a one-line user error naming the extra."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from stability.core.errors import UserError
from stability.statistics import dominance


def test_a_call_without_deepsig_is_a_user_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "deepsig", None)      # import deepsig now raises ImportError
    assert not dominance.aso_available()
    assert "pip install 'nli-stability[stats]'" in dominance.MISSING_NOTE
    with pytest.raises(UserError, match=r"fix: pip install 'nli-stability\[stats\]'"):
        dominance.epsilon_min(np.array([0.1, 0.2]), np.array([0.3, 0.4]), seed=0)


def test_module_imports_without_deepsig():
    code = ("import sys; sys.modules['deepsig'] = None\n"
            "from stability.statistics import dominance\n"
            "assert not dominance.aso_available()\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
