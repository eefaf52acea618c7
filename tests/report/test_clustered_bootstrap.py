"""The report's item-level bootstraps draw clusters of items that share a sentence: clusters read from
the runs' own diagnostic sets, the naive width beside the clustered interval, cluster=none and a named
column, the one-line errors, and the atlas regression's cluster-robust standard errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from report_runs import write_run

from stability.core.config import compose_config
from stability.core.runrecord import RunDir
from stability.data.formats import read_examples
from stability.data.run_items import run_diagnostic_records
from stability.data.sources import BUILTIN_DIR
from stability.report.bootstrap import bootstrap_ci, condition_deltas
from stability.report.cli import main
from stability.report.clusters import ItemClusters, item_clusters
from stability.report.collect import OVERALL, collect
from stability.report.instability_atlas import Design, fit_logit, regression_groups
from stability.statistics.clusters import ClusterSizes, sentence_clusters


def builtin_items(lang: str) -> tuple[np.ndarray, list[list[str]], np.ndarray]:
    """Labels, categories and sentence clusters of the built-in diagnostic set of `lang` (idx = position)."""
    examples = read_examples(BUILTIN_DIR / lang / "diagnostic.jsonl", lang)
    assert [example.idx for example in examples] == [str(i) for i in range(len(examples))]
    return (np.array([example.label for example in examples]), [list(example.categories) for example in examples],
            sentence_clusters([example.premise for example in examples], [example.hypothesis for example in examples]))


# blocks of 8 consecutive items of the built-in set: larger groups than its sentence clusters (pairs)
BLOCKS = np.arange(83) // 8


def write_builtin_runs(root: Path, lang: str, setups: dict[str, float], seeds: int, rng: np.random.Generator,
                       groups: np.ndarray) -> None:
    """Runs scored on the built-in diagnostic set of `lang`, with the config a real run writes; the
    items of each of `groups` are answered alike (right with the setup's accuracy, drawn per group and
    shared by the seeds, each seed flipping 5 % of items on its own)."""
    labels, categories, _ = builtin_items(lang)
    config = compose_config([f"lang={lang}", "data.source=builtin"])
    for setup, accuracy in setups.items():
        right = (rng.random(groups.max() + 1) < accuracy)[groups]
        for seed in range(seeds):
            flip = rng.random(len(labels)) < 0.05
            preds = np.where(right ^ flip, labels, 1 - labels)
            RunDir(write_run(root, lang, setup, seed, labels, preds, categories)).write_config(config)


@pytest.fixture
def builtin_runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    write_builtin_runs(root, "fr", {"rte": 0.6, "rte+mnli10000": 0.75}, 3, np.random.default_rng(0), BLOCKS)
    return root


def blocks() -> ItemClusters:
    """The blocks the builtin_runs' answers are grouped by, as the report's clusters."""
    return ItemClusters("block", {"fr": pd.Series(BLOCKS, index=[str(i) for i in range(83)])})


def test_clusters_come_from_the_runs_own_diagnostic_set(builtin_runs):
    collected = collect([builtin_runs])
    clusters = item_clusters("sentences", collected.predictions, collected.runs, run_diagnostic_records)
    expected = builtin_items("fr")[2]
    found = clusters.of("fr", np.array([str(i) for i in range(len(expected))]))
    np.testing.assert_array_equal(found, expected)
    summary = clusters.summary(collected.predictions).iloc[0]
    sizes = ClusterSizes.of(expected)
    assert (summary["n_items"], summary["n_clusters"], summary["largest"]) == (83, sizes.n_clusters, sizes.largest)
    assert sizes.n_clusters < 83     # the built-in set has swapped pairs: clusters are real here


def test_unreadable_text_leaves_items_on_their_own_and_says_why(synthetic_runs):
    collected = collect([synthetic_runs])   # run directories without config.yaml
    clusters = item_clusters("sentences", collected.predictions, collected.runs, run_diagnostic_records)
    assert clusters.by_lang == {} and set(clusters.unknown) == {"de", "fr"}
    assert clusters.of("fr", np.array(["0", "1"])) is None
    assert "items resampled one by one (diagnostic text not readable" in clusters.described(collected.predictions)


def test_clustered_interval_is_wider_than_the_naive_one(builtin_runs):
    """Answers grouped in blocks of 8: the item bootstrap's interval is too narrow by about √8."""
    collected = collect([builtin_runs])
    table = bootstrap_ci(collected.predictions, 2000, 0.95, 0, clusters=blocks())
    overall = table[table["category"] == OVERALL]
    width = overall["ci_high"] - overall["ci_low"]
    assert (width > 1.5 * overall["naive_ci_width"]).all()
    assert (overall["n_clusters"] == 11).all()
    # items one by one: the naive width is the interval's own, and the interval is the item bootstrap's
    plain = bootstrap_ci(collected.predictions, 2000, 0.95, 0, clusters=ItemClusters())
    np.testing.assert_allclose(plain["naive_ci_width"], plain["ci_high"] - plain["ci_low"])
    np.testing.assert_allclose(plain[["ci_low", "ci_high"]], bootstrap_ci(collected.predictions, 2000, 0.95, 0)
                               [["ci_low", "ci_high"]])
    assert (plain.loc[plain["category"] == OVERALL, "n_clusters"] == 83).all()


def test_comparison_draws_clusters_too(builtin_runs):
    collected = collect([builtin_runs])
    spread = {name: condition_deltas(collected.predictions, "rte", "rte+mnli10000", 2000, 0, clusters=chosen)["fr"]
              .replicates[:, 33].std() for name, chosen in (("clustered", blocks()), ("naive", ItemClusters()))}
    assert spread["clustered"] > 1.5 * spread["naive"]


def test_report_states_clusters_and_cluster_none_restores_items(builtin_runs, tmp_path):
    main([f"runs={builtin_runs}", f"out={tmp_path / 'a'}", "bootstrap=200", "figures=false"])
    text = (tmp_path / "a" / "report.md").read_text()
    sizes = ClusterSizes.of(builtin_items("fr")[2])
    assert f"fr: 83 items in {sizes.n_clusters} clusters (mean size {83 / sizes.n_clusters:.2f}" in text
    table = pd.read_csv(tmp_path / "a" / "bootstrap_ci.csv")
    assert {"naive_ci_width", "n_clusters"} <= set(table.columns)
    main([f"runs={builtin_runs}", f"out={tmp_path / 'b'}", "bootstrap=200", "figures=false", "cluster=none"])
    assert "Items resampled one by one (`cluster=none`)." in (tmp_path / "b" / "report.md").read_text()
    plain = pd.read_csv(tmp_path / "b" / "bootstrap_ci.csv")
    np.testing.assert_allclose(plain["naive_ci_width"], plain["ci_high"] - plain["ci_low"])


def test_named_column_clusters_by_its_values(builtin_runs):
    collected = collect([builtin_runs])
    clusters = item_clusters("coarse", collected.predictions, collected.runs, run_diagnostic_records)
    records = run_diagnostic_records(Path(collected.runs["source"].iloc[0]))
    found = clusters.of("fr", records["idx"].to_numpy())
    # one cluster per distinct list of coarse categories
    assert len(np.unique(found)) == records["coarse"].map(tuple).nunique()


def test_unknown_column_or_unreadable_records_exit_2(builtin_runs, synthetic_runs, tmp_path, capsys):
    for runs, needle in ((builtin_runs, "have no column 'difficulty'"),
                         (synthetic_runs, "cannot read the diagnostic records of de")):
        with pytest.raises(SystemExit) as stop:
            main([f"runs={runs}", f"out={tmp_path / 'never'}", "cluster=difficulty", "figures=false"])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.count("\n") == 1 and needle in err and "cluster=none" in err
        assert not (tmp_path / "never").exists()


def test_atlas_regression_groups_join_languages_by_idx_and_items_by_cluster():
    rows = pd.DataFrame({"lang": ["fr", "fr", "fr", "fr", "de", "de", "de"], "idx": ["0", "1", "2", "3", "0", "2", "4"]})
    clusters = ItemClusters("sentences", {"fr": pd.Series([0, 0, 1, 2], index=["0", "1", "2", "3"])},
                            {"de": "diagnostic text not readable"})
    groups = regression_groups(rows, clusters)
    # fr 0 and 1 share a cluster, de 0 is fr 0's item; fr 2 and de 2 one item; fr 3 and de 4 alone
    assert groups[0] == groups[1] == groups[4]
    assert groups[2] == groups[5]
    assert len({groups[0], groups[2], groups[3], groups[6]}) == 4


def test_atlas_regression_with_clusters_is_statsmodels_cluster_robust_fit():
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(40), 5)
    x = rng.integers(0, 2, 200).astype(float)
    y = pd.Series((rng.random(200) < np.where(x == 1, 0.6, 0.3)).astype(int))
    design = Design(pd.DataFrame({"intercept": np.ones(200), "coarse[Logic]": x}), y, {})
    table = fit_logit(design, 0.95, groups)
    direct = sm.Logit(y, design.X).fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups})
    np.testing.assert_allclose(table["std_err"], direct.bse, rtol=1e-10)
    plain = fit_logit(design, 0.95)
    np.testing.assert_allclose(plain["coef"], table["coef"], rtol=1e-10)
    assert not np.allclose(plain["std_err"], table["std_err"])
