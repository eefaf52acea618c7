"""The import direction the package docstrings promise: commands → jobs → core, never back up;
`annotators` builds on `stability`, never the other way; and no file imports, however indirectly,
a file that imports it (a circle inside one package breaks no layer, so it is checked by file)."""
from __future__ import annotations

import ast
import graphlib
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROJECT = ("stability", "annotators", "probing", "hydra_plugins.nli_stability")


def _in_project(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in PROJECT)
_NOTHING = ("—", "nothing else", "everything below", "")


def _readme_table() -> list[list[str]]:
    """The rows of README's "Where things are" table: package, job, may import."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ")]
    return rows[1:]  # without the header


def _module_of(path: str) -> str:
    return path.strip("/").removesuffix(".py").replace("/", ".")


def _allowed_names(cell: str) -> set[str]:
    """`core, data` → {stability.core, stability.data}; full names stay as they are."""
    names = set()
    for token in cell.split(","):
        name = token.strip()
        if name in _NOTHING:
            continue
        names.add(name if _in_project(name) else f"stability.{name}")
    return names


def _parse() -> tuple[set[str], dict[str, set[str]]]:
    commands: set[str] = set()
    allowed: dict[str, set[str]] = {}
    for package, job, imports in _readme_table():
        paths = re.findall(r"`([A-Za-z_./]+)`", package)
        if job == "command entry points":
            commands |= {_module_of(path) for path in paths if path.endswith(".py")}
        elif paths[0] != "stability/conf/":
            allowed[_module_of(paths[0])] = _allowed_names(imports)
    return commands, allowed


# The commands and what each part may import from the project (besides itself), as the README says.
COMMANDS, ALLOWED = _parse()


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
    return {name for name in names if _in_project(name)}


def _part(module: str) -> str | None:
    matches = [part for part in ALLOWED if module == part or module.startswith(part + ".")]
    return max(matches, key=len) if matches else None


def _sources() -> list[Path]:
    return sorted(path for package in PROJECT if (REPO / package.replace(".", "/")).is_dir()
                  for path in (REPO / package.replace(".", "/")).rglob("*.py"))


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


def test_the_readme_table_names_real_files():
    named = [path for package, _, _ in _readme_table() for path in re.findall(r"`([A-Za-z_./]+)`", package)
             if "/" in path]
    assert named and all((REPO / path).exists() for path in named), [p for p in named if not (REPO / p).exists()]


def _module_imports(path: Path, root: Path) -> list[tuple[str, ...]]:
    """Every import in `path`, wherever it stands (a function's body, under TYPE_CHECKING), as the
    modules it may name, most specific first: `from a import b` names a.b where b is a module, else a."""
    module = ".".join(path.relative_to(root).with_suffix("").parts)
    package = module.removesuffix(".__init__") if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: list[tuple[str, ...]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend((alias.name,) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            names.extend((f"{base}.{alias.name}", base) for alias in node.names)
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """File → the project files it imports, for every .py file of the project's packages under `root`."""
    files = {".".join(path.relative_to(root).with_suffix("").parts): path
             for package in PROJECT if (root / package.replace(".", "/")).is_dir()
             for path in (root / package.replace(".", "/")).rglob("*.py")}

    def file_of(candidates: tuple[str, ...]) -> str | None:
        return next((key for name in candidates for key in (name, f"{name}.__init__") if key in files), None)

    return {module: {target for candidates in _module_imports(path, root)
                     if (target := file_of(candidates)) is not None and target != module}
            for module, path in files.items()}


def assert_no_import_circle(root: Path) -> None:
    try:
        graphlib.TopologicalSorter(import_graph(root)).prepare()
    except graphlib.CycleError as circle:
        raise AssertionError(f"import circle: {' -> '.join(circle.args[1])}: move what both need to the "
                             "module below them") from None


def test_no_file_imports_itself_through_others():
    assert_no_import_circle(REPO)


def test_a_planted_circle_fails(tmp_path):
    """The check above can fail: dynamics.py importing loop.py, which imports it, is found in a copy."""
    for package in ("stability", "annotators", "probing", "hydra_plugins"):
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    assert_no_import_circle(tmp_path)
    dynamics = tmp_path / "stability" / "finetune" / "dynamics.py"
    dynamics.write_text(dynamics.read_text(encoding="utf-8") + "\n\ndef _planted():\n"
                        "    from .loop import train\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"stability\.finetune\.(dynamics|loop) -> stability\.finetune\."):
        assert_no_import_circle(tmp_path)
    assert {"stability.finetune.loop"} <= import_graph(tmp_path)["stability.finetune.dynamics"]
