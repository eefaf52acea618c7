"""The report's three sections on training dynamics, from the whole report's side: a sweep without
dynamics gets exactly the report it got before they existed, and a sweep with dynamics writes every
table with the columns docs/reading-the-report.md documents, each file named by `report --help`."""
from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_runs import item_categories, noisy_predictions, write_dynamics, write_run
from test_cli import _documented_columns, _help_patterns, exit_status, run_main

from annotators.features import FeatureSet
from stability.report import cli as report_cli
from stability.report.sections import SECTIONS, category_learning
from stability.report.sections import data_map as data_map_section
from stability.report.sections import instability_atlas as atlas_section

DYNAMICS_SECTIONS = (category_learning.build, data_map_section.build, atlas_section.build)
DYNAMICS_FILES = ("category_learning*", "data_map*", "instability*")
N_TRAIN, N_ITEMS, VALIDATIONS = 40, 66, 3


def _files(folder: Path) -> dict[str, bytes]:
    """Every file the report wrote, by name, but its log (time stamps) and Hydra's record."""
    return {path.name: path.read_bytes() for path in folder.iterdir()
            if path.is_file() and path.name != "report.log"}


@pytest.mark.slow
def test_a_sweep_without_dynamics_gets_the_report_it_got_before_they_existed(synthetic_runs, tmp_path,
                                                                             monkeypatch):
    options = [f"runs={synthetic_runs}", "bootstrap=30", "compare=[rte,rte+mnli10000]", "compare_langs=[fr,de]",
               "calibration_sims=40"]
    run_main(*options, f"out={tmp_path / 'now'}")
    monkeypatch.setattr(report_cli, "SECTIONS", tuple(s for s in SECTIONS if s not in DYNAMICS_SECTIONS))
    run_main(*options, f"out={tmp_path / 'before'}")
    now, before = _files(tmp_path / "now"), _files(tmp_path / "before")
    assert now.keys() == before.keys() and len(now) > 30
    for name in now:
        assert now[name] == before[name], name


def _fake_annotate(pairs: list[tuple[str, str]], lang: str) -> list[FeatureSet]:
    """Negation on every third pair, Quantifiers detectable but absent."""
    return [FeatureSet(frozenset({"Negation"}) if int(premise.split()[-1]) % 3 == 0 else frozenset(), frozenset(),
                       frozenset({"Negation", "Quantifiers"})) for premise, _ in pairs]


def _dynamics_sweep(root: Path) -> Path:
    """fr and de, 3 seeds, 3 validations: training items drift towards their label, diagnostic
    predictions get better at each validation."""
    rng = np.random.default_rng(5)
    labels, train_labels = rng.integers(0, 2, N_ITEMS), rng.integers(0, 2, N_TRAIN)
    categories = item_categories(N_ITEMS)
    for lang in ("fr", "de"):
        items = pd.DataFrame(
            [("train", f"t{i}", int(label), f"{lang} premise {i}", f"{lang} hypothesis {i}", [])
             for i, label in enumerate(train_labels)]
            + [("diagnostic", str(i), int(label), f"{lang} item {i}", f"{lang} claim {i}", categories[i])
               for i, label in enumerate(labels)],
            columns=["split", "idx", "label", "premise", "hypothesis", "categories"])
        for seed in range(3):
            steps = [noisy_predictions(rng, labels, accuracy) for accuracy in (0.5, 0.7, 0.85)]
            run = write_run(root, lang, "rte", seed, labels, steps[-1], categories)
            p_gold = np.clip(np.linspace(0.5, 0.9, VALIDATIONS)[:, None] + rng.normal(0, 0.2, (VALIDATIONS, N_TRAIN)),
                             0, 1)
            train = np.where(train_labels == 0, p_gold, 1 - p_gold)
            diagnostic = np.where(np.array(steps) == 0, 0.8, 0.2)
            prob = np.hstack([train, diagnostic])
            write_dynamics(run, items, prob, np.where(prob >= 0.5, 0, 1))
    return root


@pytest.mark.slow
def test_a_dynamics_report_writes_the_documented_tables_and_the_help_names_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report_cli, "annotate_pairs", _fake_annotate)
    out = tmp_path / "report"
    run_main(f"runs={_dynamics_sweep(tmp_path / 'runs')}", f"out={out}", "bootstrap=50")
    written = {path.name for pattern in DYNAMICS_FILES for path in out.glob(pattern)}
    assert {"category_learning.csv", "category_learning_onset.csv", "category_learning_rte.png", "data_map.csv",
            "data_map_regions.csv", "data_map_features.csv", "data_map_fr_rte.png", "data_map_de_rte.png",
            "instability_atlas.csv", "instability_regression.csv", "instability_top.csv",
            "instability_atlas_rte.png"} == written
    documented = _documented_columns()
    for name in sorted(n for n in written if n.endswith(".csv")):
        header = list(pd.read_csv(out / name, nrows=0).columns)
        assert header[:len(documented[name])] == documented[name], name
    patterns = _help_patterns(capsys)
    assert not [name for name in written if not any(fnmatch(name, pattern) for pattern in patterns)]
    page = (out / "report.md").read_text(encoding="utf-8")
    for title in ("## When each category is learned", "## Data maps", "## Instability atlas"):
        assert page.count(title) == 1


def test_an_unreadable_dynamics_file_stops_the_report_before_it_writes(tmp_path, capsys):
    root = _dynamics_sweep(tmp_path / "runs")
    broken = next(root.rglob("validation-0002.parquet"))
    broken.write_bytes(b"not parquet")
    status, err = exit_status(capsys, f"runs={root}", f"out={tmp_path / 'report'}", "bootstrap=0")
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and "unreadable training dynamics" in lines[0], err
    assert str(broken.parent) in lines[0] and "fix:" in lines[0]
    assert not (tmp_path / "report").exists()


@pytest.fixture(autouse=True)
def _annotator_cache(tmp_path, monkeypatch):
    """Whatever the annotator caches goes to the test's folder."""
    monkeypatch.setenv("NLI_STABILITY_CACHE", str(tmp_path / "cache"))
