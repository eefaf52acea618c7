"""`python -m stability.plan` (= `nli-stability plan`): the sweep Hydra would launch, its training
examples and GPU-hours."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from forked_cli import run_module

from stability.core.config import compose_config
from stability.core.languages import language, language_codes
from stability.plan import main, split_arguments
from stability.sweep.plan import compact_seeds, gpu_hours, planned_runs

REPO = Path(__file__).resolve().parents[2]
# the released sizes the configs state: train pairs per language, and MNLI pairs with a gold label
RELEASED_TRAIN_SIZES = {code: language(code).released_train_size for code in language_codes()}
# the paper's releases, train pairs counted by hand
PAPER_RELEASES = {"en": 2490, "ru": 2616, "fr": 2616, "de": 2616, "sv": 2613}
# the languages the baseline preset sweeps, in its order
BASELINE_LANGS = str(compose_config(["experiment=baseline"], return_hydra_config=True).hydra.sweeper.params.lang).split(",")
MNLI_TRAIN_SIZE = compose_config([]).data.mnli.released_train_size
MNLI_SIZES = ["1000", "5000", "10000", "50000", "100000", "200000", "250000", "_all"]


def _plan_json(capsys, *argv: str) -> dict:
    main([*argv, "plan.json=true"])
    return json.loads(capsys.readouterr().out)


def test_released_sizes_are_the_releases():
    assert {code: RELEASED_TRAIN_SIZES[code] for code in PAPER_RELEASES} == PAPER_RELEASES
    assert MNLI_TRAIN_SIZE == 392_702


@pytest.mark.slow
def test_baseline_is_its_languages_by_six_seeds():
    runs = planned_runs(["experiment=baseline"])
    assert len(runs) == 6 * len(BASELINE_LANGS)
    assert [r.lang for r in runs[::6]] == BASELINE_LANGS
    assert {r.setup for r in runs} == {"rte"}
    assert sorted(r.seed for r in runs if r.lang == "de") == list(range(6))
    assert sum(r.n_train for r in runs) == 6 * sum(RELEASED_TRAIN_SIZES[code] for code in BASELINE_LANGS)
    assert all(r.epochs == 10 and r.sizes == "release" for r in runs)


def test_validating_every_n_steps_bounds_epochs_by_jiants_t_total():
    """English RTE (2,490 pairs, 623 batches of 4): the study's recipe validates every 1,000 steps
    and trains on to 7,000 steps, 7000/623 epochs; by epochs it is max_epochs."""
    (jiant,) = planned_runs(["lang=en", "trainer=jiant_superglue"])
    (by_epoch,) = planned_runs(["lang=en", "trainer=jiant_superglue", "trainer.eval_every=epoch"])
    assert jiant.n_train == 2490
    assert jiant.epochs == pytest.approx(7000 / 623) and by_epoch.epochs == 10


@pytest.mark.slow
def test_mnli_size_sweeps_sizes_in_order():
    runs = planned_runs(["experiment=mnli_size"])
    assert len(runs) == 2 * 8 * 6
    setups = list(dict.fromkeys(r.setup for r in runs))
    assert setups == [f"rte+mnli{size}" for size in MNLI_SIZES]
    everything = [r for r in runs if r.setup == "rte+mnli_all" and r.lang == "ru"]
    assert {(r.n_added, r.n_train) for r in everything} == {(MNLI_TRAIN_SIZE, 2616 + MNLI_TRAIN_SIZE)}
    assert {r.n_train for r in runs if r.setup == "rte+mnli1000" and r.lang == "en"} == {2490 + 1000}


@pytest.mark.slow
def test_command_line_range_narrows_the_preset():
    runs = planned_runs(["experiment=mnli_size", "seed=0..1", "lang=ru"])
    assert len(runs) == 8 * 2
    assert {r.seed for r in runs} == {0, 1} and {r.lang for r in runs} == {"ru"}


def test_single_run_without_sweep():
    (run,) = planned_runs(["lang=sv", "seed=3", "data.mnli.n_samples=500"])
    assert (run.setup, run.seed, run.n_train, run.n_added) == ("rte+mnli500", 3, 2613 + 500, 500)


def test_gpu_hours_by_hand(capsys):
    plan = _plan_json(capsys, "lang=fr", "data.source=builtin", "seed=0..1", "trainer.max_epochs=3",
                      "plan.samples_per_second=2")
    n_train = sum(1 for line in (REPO / "stability/data/builtin/fr/train.jsonl").open() if line.strip())
    assert [r["n_train"] for r in plan["runs"]] == [n_train, n_train]
    assert plan["runs"][0]["sizes"] == "counted"
    totals = plan["totals"]
    assert totals["example_epochs"] == 2 * n_train * 3
    assert totals["gpu_hours"] == pytest.approx(2 * n_train * 3 / 2 / 3600)
    assert gpu_hours(7200, 2) == 1.0


def test_expected_epochs_and_counted_files(tmp_path, capsys):
    terra = tmp_path / "French" / "TERRa"
    terra.mkdir(parents=True)
    row = '{"premise": "a", "hypothesis": "b", "label": "entailment"}\n'
    (terra / "train_fr.jsonl").write_text(row * 5, encoding="utf-8")
    plan = _plan_json(capsys, "lang=fr", f"data.root={tmp_path}", "plan.expected_epochs=2.5",
                      "plan.samples_per_second=1")
    (run,) = plan["runs"]
    assert (run["n_train"], run["epochs"], run["sizes"]) == (5, 2.5, "counted")
    assert plan["totals"]["gpu_hours"] == pytest.approx(5 * 2.5 / 3600)
    cut = planned_runs(["lang=fr", f"data.root={tmp_path}", "data.max_train_samples=3"])
    assert cut[0].n_train == 3


@pytest.mark.slow
def test_readable_table(capsys):
    main(["experiment=baseline", "seed=0..1", "plan.samples_per_second=40"])
    out = capsys.readouterr().out
    assert out.startswith(f"{2 * len(BASELINE_LANGS)} runs · languages {', '.join(BASELINE_LANGS)} · setups rte · "
                          "seeds 0..1")
    assert "baseline    sv    rte     0..1     2         2,613" in out
    hours = 2 * 10 * sum(RELEASED_TRAIN_SIZES[code] for code in BASELINE_LANGS) / 40 / 3600
    assert f"GPU-hours: {hours:,.2f} at 40 samples/s" in out


def test_plan_options_and_training_overrides_are_told_apart():
    own, training = split_arguments(["experiment=baseline", "plan.json=true", "-m", "--cfg", "job", "+plan.x=1",
                                     "seed=0..1", "hydra.searchpath=[file:///x]", "--help"])
    assert own == ["plan.json=true", "--cfg", "job", "+plan.x=1", "--help"]
    assert training == ["experiment=baseline", "-m", "seed=0..1", "hydra.searchpath=[file:///x]"]


def test_the_plan_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["lang=fr", "data.source=builtin", "seed=0..1"])
    assert capsys.readouterr().out.startswith("2 runs · languages fr")
    assert list(tmp_path.iterdir()) == []


def test_compact_seeds():
    assert compact_seeds([3, 0, 1, 2, 5, 7, 8]) == "0..3,5,7..8"
    assert compact_seeds([4]) == "4"


@pytest.mark.parametrize("argv, fragment", [
    (["experiment=baseline", "plan.samples_per_second=fast"],
     "plan.samples_per_second='fast' is not a number"),
    (["experiment=baseline", "plan.expected_epochs=0"], "plan.expected_epochs=0.0 is out of range"),
    (["experiment=baseline", "plan.samples_per_second=inf"], "plan.samples_per_second=inf is out of range (fix: pass plan.samples_per_second=<a number > 0 or null>)"),
    (["plan.nokey=1"], "unknown key 'plan.nokey'"),
    (["trainer.no_such_key=1"], "unknown key 'trainer.no_such_key'"),
    (["seed=3..1"], "bad range 'seed=3..1'"),
    (["baseline"], "Error parsing override 'baseline'"),
])
def test_user_errors_in_process(argv, fragment, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err and err.count("\n") == 1


@pytest.mark.slow
def test_unknown_experiment_exits_2():
    result = run_module("stability.plan", ["experiment=nope"], REPO, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "unknown experiment 'nope'" in result.stderr and "baseline" in result.stderr


@pytest.mark.parametrize("arguments", [
    ["lang=en,ru", "seed=0,1,2"],
    ["lang=en,ru,fr", "seed=0,1", "lang=de", "trainer.max_epochs=3"],   # a later key replaces the list
    ["data.mnli.n_samples=1000,all", "seed=range(0,3)", "+extra=x"],
    ["seed=5"],
])
def test_sweep_expansion_equals_hydras_basic_sweeper(arguments):
    """The plan expands sweeps with Hydra's public override API; if Hydra's basic sweeper ever
    expands differently, this fails and the plan must follow."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from hydra_plugins.nli_stability.sweepers import CheckedSweeper
    from stability.core.jobs import BASIC_SWEEPERS, sweep_jobs

    assert [f"{cls.__module__}.{cls.__name__}" for cls in (BasicSweeper, CheckedSweeper)] == list(BASIC_SWEEPERS)
    assert CheckedSweeper.split_arguments is BasicSweeper.split_arguments    # the same expansion
    parsed = OverridesParser.create().parse_overrides(arguments)
    (expected,) = BasicSweeper.split_arguments(parsed, max_batch_size=None)
    assert sweep_jobs(parsed) == expected


PRESETS_SWEEP = ("experiment=baseline,rte_mnli: a sweep over presets runs the command's own sweep, not each "
                 "preset's, and experiment=baseline sweeps lang over en,ru,fr,de,sv and seed over 0,1,2,3,4,5 "
                 "(fix: run one command per preset (experiment=baseline, then experiment=rte_mnli), or give the "
                 "keys the presets sweep on the command line: lang=en,ru,fr,de,sv seed=0,1,2,3,4,5)")


def test_a_sweep_over_presets_that_sweep_is_refused_by_plan_and_train_alike(capsys):
    """Hydra takes the sweep from the command's config, composed without the swept presets: each
    preset's own languages and seeds would be dropped (English, seed 0) without a word. The refusal is
    `core.jobs.job_configs`', which `train` calls on its command line before Hydra starts, as `plan` does."""
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment=baseline,rte_mnli"])
    assert exit_info.value.code == 2 and capsys.readouterr().err == f"error: {PRESETS_SWEEP}\n"
    given = planned_runs(["experiment=baseline,rte_mnli", "lang=en,ru", "seed=0..1"])   # the sweep is the command's
    assert [(r.experiment, r.lang, r.setup, r.seed) for r in given] == [
        (experiment, lang, setup, seed) for experiment, setup in (("baseline", "rte"), ("rte_mnli", "rte+mnli_all"))
        for lang in ("en", "ru") for seed in (0, 1)]


def test_trainer_presets_are_rows_of_their_own_and_the_epochs_line_says_what_bounds_them(capsys):
    """docs/clusters.md: two trainer presets' rows differ by their variant, and a run validated every
    1,000 steps plans its steps rounded up to whole validations (smoke: 64 pairs at batch size 8, so
    125 epochs), as the epochs line then says."""
    main(["experiment=smoke", "trainer=mosbach,jiant_superglue", "plan.samples_per_second=1e-300"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["experiment", "lang", "setup", "variant", "seeds", "runs", "examples/run", "epochs",
                                "example-epochs", "GPU-h"]
    assert [line.split()[:8] for line in lines[4:6]] == [
        ["smoke", "en", "rte", "trainer-mosbach", "0..1", "2", "64", "10"],
        ["smoke", "en", "rte", "trainer-jiant-superglue", "0..1", "2", "64", "125"]]
    assert lines[4].split()[-1] == f"{1280 / 1e-300 / 3600:.3g}"      # not a number of 300 digits
    assert any(line.startswith("epochs: trainer.max_epochs (for runs that validate every 1,000 steps, "
                               "trainer.eval_every: max_epochs' steps rounded up to whole validations, more epochs on "
                               "a small training set), an upper bound") for line in lines)
