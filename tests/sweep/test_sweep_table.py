"""The results table printed after a sweep: every row's columns start (text) or end (numbers) where the
header's do, also with a variant column, extra-set columns, negative scores and a long setup name."""
from __future__ import annotations

from omegaconf import OmegaConf

from stability.core.markdown import counted
from stability.core.runrecord import RunDir, RunRecord
from stability.sweep.table import SweepTable, format_table, remember_sweep, text_table

SCORES = dict(val_accuracy=0.5417, overall_mcc=-0.0835, mean_category_mcc=0.0171)


def _records() -> list[RunRecord]:
    return [
        RunRecord(lang="en", setup="rte", seed=0, variant="trainer.optimizer=adamw", **SCORES,
                  extra_eval={"hans": {"accuracy": 0.5, "mcc": -0.0125}}),
        RunRecord(lang="en", setup="rte", seed=12, variant="trainer.optimizer=bertadam", **SCORES),
        RunRecord(lang="fr", setup="a_setup_name_longer_than_twenty_eight", seed=3, **SCORES,
                  extra_eval={"sick": {"accuracy": 0.75, "mcc": 0.5}}),
    ]


def _cells(record: RunRecord, with_variant: bool, extra: list[str]) -> list[str]:
    scores = [f"{record.extra_eval[name][key]:.4f}" if name in record.extra_eval else "–"
              for name in extra for key in ("accuracy", "mcc")]
    return [record.lang, record.setup, *([record.variant] if with_variant else []), str(record.seed),
            "0.5417", "-0.0835", "0.0171", *scores]


def _assert_aligned(printed: str, header: list[str], rows: list[list[str]], right: list[bool]) -> None:
    lines = printed.splitlines()
    assert set(lines[1]) == {"-"} and len(lines[1]) == max(len(line) for line in lines)

    def spans(line: str, cells: list[str]) -> list[tuple[int, int]]:
        found, position = [], 0
        for cell in cells:
            start = line.index(cell, position)
            found.append((start, start + len(cell)))
            position = start + len(cell) + (2 if cell else 0)
        return found

    expected = spans(lines[0], header)
    for line, cells in zip(lines[2:], rows, strict=True):
        for (start, end), (header_start, header_end), cell, at_right in zip(spans(line, cells), expected, cells,
                                                                              right):
            if cell:
                assert (end == header_end) if at_right else (start == header_start), (line, cell)


def test_variant_and_extra_set_columns_line_up():
    records = _records()
    header = ["lang", "setup", "variant", "seed", "val acc", "overall MCC", "mean cat MCC", "hans acc", "hans MCC",
              "sick acc", "sick MCC"]
    ordered = sorted(records, key=lambda m: (m.lang, m.setup, m.variant, m.seed))
    rows = [_cells(m, True, ["hans", "sick"]) for m in ordered]
    right = [False, False, False] + [True] * 8
    _assert_aligned(format_table(records), header, rows, right)
    assert format_table(records).splitlines()[4].endswith("0.7500    0.5000")


def test_without_variant_the_column_is_left_out():
    record = RunRecord(lang="en", setup="rte", seed=0, **SCORES)
    printed = format_table([record])
    assert printed.splitlines()[0] == "lang  setup  seed  val acc  overall MCC  mean cat MCC"
    _assert_aligned(printed, printed.splitlines()[0].split("  "), [_cells(record, False, [])],
                    [False, False] + [True] * 4)


def test_negative_numbers_and_missing_cells_are_right_aligned():
    printed = text_table([["name", "delta"], ["a", "-1.5"], ["bb", "–"], ["c", "12.25"]])
    assert printed.splitlines() == ["name  delta", "-----------", "a      -1.5", "bb        –", "c     12.25"]


def test_a_one_run_sweep_says_one_run(tmp_path, capsys):
    run = RunDir(tmp_path / "en" / "rte" / "seed0")
    run.path.mkdir(parents=True)
    run.write_record(RunRecord(lang="en", setup="rte", seed=0, **SCORES))
    SweepTable().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}}))
    assert f"Results in {tmp_path} (1 run):" in capsys.readouterr().out
    assert (counted(1, "run"), counted(2, "run"), counted(2, "CSV file")) == ("1 run", "2 runs", "2 CSV files")


def test_the_table_lists_the_sweeps_own_runs_and_counts_the_others(tmp_path, capsys):
    """An adaptive sweep's round, or a fixed sweep into a folder with runs of other commands: the
    table is the runs this sweep checked (`remember_sweep`), not every run of the folder."""
    for seed in range(3):
        run = RunDir(tmp_path / "en" / "rte" / f"seed{seed}")
        run.path.mkdir(parents=True)
        run.write_record(RunRecord(lang="en", setup="rte", seed=seed, **SCORES))
    jobs = [OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path), "subdir": f"en/rte/seed{seed}"}}})
            for seed in (1, 3)]   # seed 3: a job that did not finish
    remember_sweep(jobs)
    SweepTable().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}}))
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[0] == f"Results in {tmp_path} (1 run; 2 more in the folder):"
    assert [line.split()[2] for line in printed[3:]] == ["1"]
