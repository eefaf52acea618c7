"""Cross-lingual consistency with hand-made predictions: agreement, κ, split, transitions, baseline."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from report_runs import write_run
from sklearn.metrics import cohen_kappa_score

from stability.report.cli import main
from stability.report.collect import collect
from stability.report.consistency import consistency

LABELS = [0, 0, 0, 0, 1, 1, 1, 1]
FR_0 = [0, 0, 0, 1, 1, 1, 0, 1]     # fr seed 0: right on items 0, 1, 2, 4, 5, 7
FR_1 = [0, 0, 0, 1, 1, 1, 0, 0]     # fr seed 1: differs from seed 0 on item 7 only
DE_0 = [0, 0, 1, 1, 1, 0, 0, 1]     # de seed 0: agrees with fr seed 0 on items 0, 1, 3, 4, 6, 7
DE_1 = [0, 1, 1, 1, 1, 0, 0, 1]
CATEGORIES = [["Negation"]] * 3 + [["Quantifiers"]] * 5


def _predictions(tmp_path, runs: dict[tuple[str, int], list[int]]) -> pd.DataFrame:
    for (lang, seed), preds in runs.items():
        write_run(tmp_path / "runs", lang, "rte", seed, np.array(LABELS), np.array(preds), CATEGORIES)
    return collect([tmp_path / "runs"]).predictions


def _row(pairs: pd.DataFrame, lang_a: str, lang_b: str, seed_a: int, seed_b: int) -> pd.Series:
    match = pairs[(pairs["lang_a"] == lang_a) & (pairs["lang_b"] == lang_b) & (pairs["seed_a"] == seed_a)
                  & (pairs["seed_b"] == seed_b)]
    assert len(match) == 1
    return match.iloc[0]


@pytest.fixture
def tables(tmp_path):
    return consistency(_predictions(tmp_path, {("fr", 0): FR_0, ("fr", 1): FR_1, ("de", 0): DE_0,
                                               ("de", 1): DE_1}))


def test_consistency_kappa_split_and_transitions(tables):
    row = _row(tables.pairs, "fr", "de", 0, 0)
    assert row["n_items"] == 8
    assert row["consistency"] == pytest.approx(6 / 8)
    assert row["kappa"] == pytest.approx(0.5) == pytest.approx(cohen_kappa_score(FR_0, DE_0))
    # fr right on 0, 1, 2, 4, 5, 7 (de agrees on 0, 1, 4, 7), wrong on 3, 6 (de agrees on both)
    assert (row["n_correct_a"], row["consistency_correct"], row["consistency_incorrect"]) == (6, 4 / 6, 1.0)
    weighted = (row["n_correct_a"] * row["consistency_correct"]
                + (row["n_items"] - row["n_correct_a"]) * row["consistency_incorrect"]) / row["n_items"]
    assert weighted == pytest.approx(row["consistency"])
    # fr -> de: ent->ent on 0, 1, 6; ent->not on 2; not->ent on 5; not->not on 3, 4, 7
    assert list(row[["n_ent_ent", "n_ent_not", "n_not_ent", "n_not_not"]]) == [3, 1, 1, 3]
    reverse = _row(tables.pairs, "de", "fr", 0, 0)
    assert (reverse["consistency"], reverse["kappa"]) == (row["consistency"], row["kappa"])
    # de right on 0, 1, 4, 7 (fr agrees on all four), wrong on 2, 3, 5, 6 (fr agrees on 3, 6)
    assert (reverse["consistency_correct"], reverse["consistency_incorrect"]) == (1.0, 0.5)
    assert list(reverse[["n_ent_ent", "n_ent_not", "n_not_ent", "n_not_not"]]) == [3, 1, 1, 3]


def test_seed_baseline(tables):
    baseline = tables.pairs[tables.pairs["lang_a"] == tables.pairs["lang_b"]]
    assert sorted(zip(baseline["lang_a"], baseline["seed_a"], baseline["seed_b"])) == [("de", 0, 1), ("fr", 0, 1)]
    fr = _row(tables.pairs, "fr", "fr", 0, 1)
    assert fr["consistency"] == pytest.approx(7 / 8)
    assert fr["kappa"] == pytest.approx(cohen_kappa_score(FR_0, FR_1)) == pytest.approx(0.75)
    summary = tables.summary.set_index(["lang_a", "lang_b"])
    de_de = cohen_kappa_score(DE_0, DE_1)
    assert summary.loc[("fr", "de"), "kappa_baseline"] == pytest.approx((0.75 + de_de) / 2)
    assert summary.loc[("fr", "de"), "n_pairs"] == 2                       # seeds 0 and 1


def test_mean_and_sigma_over_seeds_and_categories(tables):
    kappas = [cohen_kappa_score(FR_0, DE_0), cohen_kappa_score(FR_1, DE_1)]
    row = tables.summary.set_index(["lang_a", "lang_b"]).loc[("fr", "de")]
    assert row["kappa_mean"] == pytest.approx(np.mean(kappas))
    assert row["kappa_std"] == pytest.approx(np.std(kappas, ddof=1))
    by_category = tables.by_category.set_index(["lang_a", "lang_b", "category"])
    # seed 0: Negation items 0-2 agree on 0, 1 -> 2/3; seed 1 (FR_1 vs DE_1): agree on 0 only -> 1/3
    assert by_category.loc[("fr", "de", "Negation"), "consistency_mean"] == pytest.approx(0.5)
    assert by_category.loc[("fr", "de", "Negation"), "n_items"] == 3
    assert by_category.loc[("fr", "de", "Logic"), "level"] == "coarse"
    assert by_category.loc[("fr", "de", "all items"), "consistency_mean"] == pytest.approx(row["consistency_mean"])


def test_identical_predictions_agree_fully(tmp_path):
    tables = consistency(_predictions(tmp_path, {("fr", 0): FR_0, ("sv", 0): FR_0}))
    row = _row(tables.pairs, "fr", "sv", 0, 0)
    assert (row["consistency"], row["kappa"], row["consistency_correct"], row["consistency_incorrect"]) == (1, 1, 1, 1)


def test_constant_predictions_give_kappa_zero_and_a_warning(tmp_path, caplog):
    constant = [0] * 8
    with caplog.at_level(logging.WARNING):
        tables = consistency(_predictions(tmp_path, {("fr", 0): constant, ("de", 0): constant,
                                                     ("sv", 0): FR_0}))
    both = _row(tables.pairs, "fr", "de", 0, 0)
    assert (both["consistency"], both["kappa"], bool(both["kappa_defined"])) == (1.0, 0.0, False)
    one = _row(tables.pairs, "fr", "sv", 0, 0)
    assert one["kappa"] == 0.0 and one["consistency"] == pytest.approx(4 / 8) and one["kappa_defined"]
    assert tables.n_constant == 6                                    # every ordered pair holds a constant run
    assert "constant predictions" in caplog.text
    out = tmp_path / "report"
    main([f"runs={tmp_path / 'runs'}", "calibration_sims=0", f"out={out}", "bootstrap=0", "figures=false"])
    report = (out / "report.md").read_text()
    assert "## Cross-lingual consistency" in report and "**Warning:** 6 of 6 run pairs" in report
    written = pd.read_csv(out / "consistency.csv")
    assert list(written.columns[:11]) == ["setup", "variant", "lang_a", "lang_b", "seed_a", "seed_b", "n_items",
                                          "consistency", "kappa", "consistency_correct", "consistency_incorrect"]


def test_items_are_matched_by_idx(tmp_path):
    predictions = _predictions(tmp_path, {("fr", 0): FR_0, ("de", 0): DE_0})
    de = predictions["lang"] == "de"
    shuffled = pd.concat([predictions[~de], predictions[de].iloc[::-1]])       # order must not matter
    dropped = shuffled[~(de.reindex(shuffled.index) & shuffled["idx"].isin(["6", "7"]))]
    row = _row(consistency(dropped).pairs, "fr", "de", 0, 0)
    assert row["n_items"] == 6 and row["consistency"] == pytest.approx(4 / 6)  # items 0-5: agree on 0, 1, 3, 4


def test_one_language_gives_no_consistency(tmp_path):
    assert consistency(_predictions(tmp_path, {("fr", 0): FR_0, ("fr", 1): FR_1})) is None


def test_data_qa_flags_joined_with_consistency(tmp_path):
    from stability.core.qaflags import Flag, write_flags

    _predictions(tmp_path, {("fr", 0): FR_0, ("de", 0): DE_0})
    qa = tmp_path / "qa_de"
    qa.mkdir()
    write_flags(qa / "flagged.jsonl", [
        Flag("LiDiRus_gr.jsonl", "de", "diagnostic", "2", "hypothesis", "line", "identified as 'en'", "…", "en", 0.9),
        Flag("LiDiRus_gr.jsonl", "de", "diagnostic", "5", "premise", "word", "letters outside: с", "…"),
        Flag("LiDiRus_gr.jsonl", "de", "diagnostic", "6", "pair", "near_duplicate", "repeats item 5", "…"),
        Flag("train_gr.jsonl", "de", "train", "0", "premise", "line", "identified as 'en'", "…", "en", 0.9),
    ])
    out = tmp_path / "report"
    main([f"runs={tmp_path / 'runs'}", "calibration_sims=0", f"out={out}", "bootstrap=0", "figures=false",
          f"dataqa={qa}"])
    row = pd.read_csv(out / "consistency_flagged.csv").iloc[0]
    # only translation findings of diagnostic items count: items 2 and 5, where fr and de disagree
    assert (row["lang_a"], row["lang_b"], row["n_items_flagged"], row["n_items_unflagged"]) == ("de", "fr", 2, 6)
    assert (row["consistency_flagged"], row["consistency_unflagged"], row["consistency_difference"]) == (0, 1, -1)
    assert "Data QA × consistency" in (out / "report.md").read_text()
    for bad in ([f"dataqa={tmp_path}"], ["consistency_pair=[fr,sv]"]):   # nothing written
        with pytest.raises(SystemExit):
            main([f"runs={tmp_path / 'runs'}", f"out={tmp_path / 'not_written'}", "figures=false", *bad])
        assert not (tmp_path / "not_written").exists()
