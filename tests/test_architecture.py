"""The import direction the package docstrings promise: commands → jobs → core, never back up;
`annotators` builds on `stability`, never the other way."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
COMMANDS = {"stability.train", "stability.plan", "stability.generate", "stability.status", "probing.__main__"}
# What each part may import from the project (besides itself).
ALLOWED: dict[str, set[str]] = {
    "stability.core": set(),
    # data.diagnostic=generated: the diagnostic set generated from the test-suite templates
    "stability.data": {"stability.core", "stability.templates"},
    "stability.tracking": {"stability.core", "stability.report"},
    "stability.finetune": {"stability.core", "stability.data", "stability.tracking"},
    "stability.sweep": {"stability.core", "stability.data", "stability.finetune.distributed"},
    "stability.report": {"stability.core"},
    "stability.templates": {"stability.core"},
    "stability.dataqa": {"stability.core", "stability.data"},
    "annotators": {"stability.core", "stability.data"},
    "probing": {"stability.core", "stability.data", "stability.report", "annotators"},
}
PROJECT = ("stability", "annotators", "probing")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name for name in names if name.split(".")[0] in PROJECT}


def _part(module: str) -> str | None:
    matches = [part for part in ALLOWED if module == part or module.startswith(part + ".")]
    return max(matches, key=len) if matches else None


def _sources() -> list[Path]:
    return sorted(path for package in PROJECT if (REPO / package).is_dir()
                  for path in (REPO / package).rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_follow_the_layers(path):
    module = _module_name(path)
    if module in COMMANDS or module == "stability":
        return  # command entry points may import any job
    part = _part(module)
    assert part is not None, f"{module} belongs to no declared part: add it to ALLOWED with its imports"
    for imported in _imports(path):
        if _part(imported) == part:
            continue
        assert imported not in COMMANDS, f"{module} imports the command {imported}"
        assert any(imported == allowed or imported.startswith(allowed + ".") for allowed in ALLOWED[part]), \
            f"{module} ({part}) imports {imported}, outside {sorted(ALLOWED[part]) or 'nothing'}"


def test_only_commands_at_the_top_of_stability():
    top = {path.stem for path in (REPO / "stability").glob("*.py")} - {"__init__"}
    assert {f"stability.{name}" for name in top} <= COMMANDS
