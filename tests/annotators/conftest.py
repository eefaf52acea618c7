"""Make `import annotators` find the package, not this test folder.

pytest puts `tests/` on sys.path (for tests/conftest.py), where `tests/annotators/` looks
like a namespace package named `annotators`; with the repository root on sys.path too,
the real (regular) package wins.
"""
import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
