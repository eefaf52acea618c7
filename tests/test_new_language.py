"""A language added as docs/extending.md, "A language", says, outside the package: the docs' own
config block in a config folder of the user's (`hydra.searchpath`), data files under a data
root, suites copied from another language into a suites folder; `train`, `generate` and
`dataqa` take it as a user runs them. If a step is missing from the docs, this fails."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from forked_cli import run_module

from stability.core.runrecord import iter_runs
from stability.data.sources import BUILTIN_DIR
from stability.templates.suites import SUITES_DIR

pytestmark = pytest.mark.slow     # three commands in subprocesses, one a training run
EXTENDING = Path(__file__).resolve().parent.parent / "docs" / "extending.md"
CODE = "xx"


@dataclass(frozen=True)
class Layout:
    """The user's folders: configs (with suites/), data root, and where outputs go."""

    configs: Path
    data: Path
    out: Path

    def command(self, *args: str) -> subprocess.CompletedProcess:
        """`nli-stability ARGS` with the user's config folder on the search path."""
        env = {key: value for key, value in os.environ.items() if key != "NLI_STABILITY_TRACEBACK"}
        return run_module("stability.cli", [args[0], f"hydra.searchpath=[file://{self.configs}]", f"lang={CODE}",
                                            *args[1:]], self.out, env=env)


def documented_config() -> str:
    """The YAML block of the docs' "A language" section, as a reader copies it."""
    section = EXTENDING.read_text(encoding="utf-8").split("\n## A language\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^( *)```yaml\n(.*?)^\1```", section, re.MULTILINE | re.DOTALL)
    assert block, "docs/extending.md, \"A language\": no ```yaml block with the language's config"
    return textwrap.dedent(block.group(2))


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    """Steps 1-3 of the docs: the config, the data its `files` name (the built-in English rows,
    in a released format), the suites (a copy of the English folder)."""
    layout = Layout(tmp_path / "configs", tmp_path / "data", tmp_path / "work")
    text = documented_config()
    (layout.configs / "lang").mkdir(parents=True)
    (layout.configs / "lang" / f"{CODE}.yaml").write_text(text, encoding="utf-8")
    for split, relative in yaml.safe_load(text)["files"].items():
        (layout.data / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUILTIN_DIR / "en" / f"{split}.jsonl", layout.data / relative)
    shutil.copytree(SUITES_DIR / "en", layout.configs / "suites" / CODE)
    layout.out.mkdir()
    return layout


def test_train_generate_and_dataqa_take_a_language_of_the_users_own(layout: Layout):
    trained = layout.command("train", "experiment=smoke", "data.source=files", f"data.root={layout.data}",
                             "data.max_train_samples=16", "trainer.max_epochs=1", "seed=0",
                             f"paths.output_dir={layout.out / 'runs'}")
    assert trained.returncode == 0, trained.stderr
    (run,) = iter_runs(layout.out / "runs")
    record = run.read_record()
    assert (record.lang, record.seed, record.n_train) == (CODE, 0, 16)
    assert len(run.read_predictions()) == record.n_items == 83          # the diagnostic file under data.root

    generated = layout.command("generate", f"suites_dir={layout.configs / 'suites'}", "n=2",
                               f"out={layout.out / 'suites'}")
    assert generated.returncode == 0, generated.stderr
    suite = layout.out / "suites" / f"{CODE}-all-n2-seed0.jsonl"
    assert generated.stdout.strip().endswith(f"to {suite}") and suite.stat().st_size > 0

    files = [layout.data / relative for relative in sorted(yaml.safe_load(documented_config())["files"].values())]
    checked = layout.command("dataqa", f"files=[{','.join(map(str, files))}]", f"out={layout.out / 'qa'}")
    assert checked.returncode == 0, checked.stderr
    written = {path.name for path in (layout.out / "qa").iterdir()}
    assert {"dataqa.csv", "dataqa_categories.csv", "leaks.csv", "flagged.jsonl", "dataqa.md"} <= written
    assert (layout.out / "qa" / "dataqa.md").read_text(encoding="utf-8").startswith(f"# Data QA: Xish ({CODE})")
