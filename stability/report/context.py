"""What every section of the report reads: the options, the runs, and the tables several share.

`prepare` reads the inputs and checks every option against them before anything is
written (a wrong path, CSV, compared setup or language pair is one line and exit status 2,
and no report folder is left behind). The tables more than one section needs (seed
statistics, the failed-run verdicts, the non-failed statistics, the bootstrap of a
comparison) are computed once, on first use, and shared.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import pandas as pd

from stability.core.adaptiverecord import AdaptiveRecord, read_record
from stability.core.errors import UserError
from stability.core.qaflags import FLAGGED_FILE, TRANSLATION_CHECKS, read_flags
from stability.core.schemas.report import ReportSchema
from stability.report.alignment import check_aligned
from stability.report.annotation import Annotate
from stability.report.bootstrap import condition_deltas, language_deltas
from stability.report.calibration import Calibration, calibrate, with_feature_tests, with_rows
from stability.report.clusters import ItemClusters, ReadRecords, item_clusters, language_records, remembered
from stability.report.collect import DEGENERATE, PROVENANCE, Collected, collect
from stability.report.compare import check_conditions, check_languages
from stability.report.decision_calibration import decision_calibration, decision_records
from stability.report.data_map import DataMaps, FeatureShares, data_maps, feature_shares
from stability.report.dynamics import RunDynamics, read_run_dynamics
from stability.report.failed import FailedRule, failed_runs, without_failed
from stability.report.sequential_pairs import decided_pairs
from stability.report.stabilizers import reference_pairs
from stability.report.stats import summary
from stability.statistics.multiplicity import PairedDeltas
from stability.statistics.seeds import category_stats


@dataclass
class Context:
    """The inputs of one report. `results` and `predictions` leave out the failed runs when
    `exclude_failed` is set; `all_results` (results.csv) always keeps every run."""

    options: ReportSchema
    paths: list[Path]
    out: Path
    collected: Collected
    failed: pd.DataFrame                            # failed_runs.csv (empty: no run directory judged)
    all_results: pd.DataFrame                       # the tidy table with its runs' commits and `degenerate` flags
    kept_results: pd.DataFrame                      # the same, without failed runs under exclude_failed
    predictions: pd.DataFrame
    flagged_by_lang: dict[str, set[str]] | None     # dataqa: flagged diagnostic items per language
    # training dynamics of the runs that recorded them (without failed runs under exclude_failed)
    dynamics: list[RunDynamics]
    annotate: Annotate | None = None                # the rule-based annotator, handed in by the command
    clusters: ItemClusters = field(default_factory=ItemClusters)   # what item-level bootstraps draw together
    read_records: ReadRecords | None = None         # a run's diagnostic records in a language, handed in by the command
    # the adaptive sweeps' records in folders of `runs=`, read (and checked) before anything is written
    adaptive_records: list[tuple[Path, AdaptiveRecord]] = field(default_factory=list)

    @cached_property
    def results(self) -> pd.DataFrame:
        """The tidy table the statistics read (no flags, no commits)."""
        return self.kept_results.drop(columns=[*PROVENANCE, DEGENERATE])

    @cached_property
    def fine_flags(self) -> pd.DataFrame:
        """Fine rows with their `degenerate` flag: the heat maps grey out undefined MCCs."""
        return self.kept_results[self.kept_results["level"] == "fine"]

    @cached_property
    def summary(self) -> pd.DataFrame:
        return summary(self.results)

    @cached_property
    def category_stats(self) -> pd.DataFrame:
        return category_stats(self.results)

    @cached_property
    def nonfailed_results(self) -> pd.DataFrame:
        return without_failed(self.results, self.failed)

    @cached_property
    def summary_nonfailed(self) -> pd.DataFrame | None:
        """The summary over the non-failed runs; None when no run directory was judged."""
        return None if self.failed.empty else summary(self.nonfailed_results)

    @cached_property
    def compared_deltas(self) -> dict[str, PairedDeltas]:
        """`compare=[A,B]`: per language the paired bootstrap of B − A (`bootstrap.condition_deltas`)."""
        return self._paired_bootstrap(self.options.compare, condition_deltas)

    @cached_property
    def decided_pairs(self) -> set[frozenset[str]]:
        """The pairs an adaptive sweep's decision goal compared (`report.sequential_pairs`): the sections
        that test a pair give no fixed-n p-value for these."""
        return decided_pairs([record for _, record in self.adaptive_records])

    def decided_sequentially(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.decided_pairs

    @cached_property
    def language_deltas(self) -> dict[tuple[str, str], PairedDeltas]:
        """`compare_langs=[A,B]`: per condition the paired bootstrap of B − A (`bootstrap.language_deltas`)."""
        return self._paired_bootstrap(self.options.compare_langs, language_deltas)

    def _paired_bootstrap(self, pair: list[str] | None, deltas_of: Callable[..., dict]) -> dict:
        """`deltas_of(predictions, A, B, samples, random_state, clusters=...)`; empty without the pair,
        bootstrap or predictions."""
        if not (pair and self.options.bootstrap and not self.predictions.empty):
            return {}
        return deltas_of(self.predictions, *pair, self.options.bootstrap, self.options.random_state,
                         clusters=self.clusters)

    @cached_property
    def calibration(self) -> Calibration | None:
        """Coverage and false-positive rates of the seed-level statistics at these runs' design, and
        the interval method each cell prints (`report.calibration`); None with calibration_sims=0."""
        options = self.options
        if not options.calibration_sims:
            return None
        references = reference_pairs(self.results, options.reference).references
        calibration = calibrate(self.results, self.failed, references=references, compare=options.compare,
                                sims=options.calibration_sims, confidence=options.confidence,
                                aso_iterations=options.aso_iterations, random_state=options.random_state,
                                bootstrap=options.bootstrap, compare_langs=options.compare_langs)
        decided = decision_calibration(decision_records(self.paths), self.all_results, self.failed,
                                       sims=options.calibration_sims, random_state=options.random_state)
        calibration = with_rows(calibration, decided)
        if not self.dynamics:
            return calibration
        return with_feature_tests(calibration, self.feature_shares.designs, self.data_maps.seeds,
                                  sims=options.calibration_sims, random_state=options.random_state)

    @cached_property
    def data_maps(self) -> DataMaps:
        """The data maps of the runs with training dynamics (`report.data_map`)."""
        return data_maps(self.dynamics)

    @cached_property
    def feature_shares(self) -> FeatureShares:
        """The annotator features of the data maps' training items, with their Fisher tests' designs."""
        return feature_shares(self.data_maps, self.annotate)

    @cached_property
    def extra(self) -> pd.DataFrame:
        """Scores on the extra evaluation sets, without failed runs under exclude_failed."""
        extra = self.collected.extra
        return without_failed(extra, self.failed) if self.options.exclude_failed else extra

    @cached_property
    def has_variants(self) -> bool:
        """Whether some run has a variant: report.md then shows a variant column."""
        return bool((self.all_results["variant"] != "").any())

    def records_of(self, lang: str) -> tuple[pd.DataFrame | None, str]:
        """The diagnostic records (idx, premise, hypothesis, ...) of `lang`'s runs, or None and why not."""
        return language_records(lang, self.collected.runs, self.read_records)

    @property
    def sources(self) -> str:
        """What was read, for the page's first line."""
        return (f"{self.collected.n_runs} run directories and {self.collected.n_csv} tidy CSV files "
                f"from {', '.join(str(path) for path in self.paths)}")


def prepare(options: ReportSchema, annotate: Annotate | None = None, read_records: ReadRecords | None = None) -> Context:
    """Read the inputs and check the options against them; creates the output folder last.
    `annotate` is the rule-based annotator the sections on training dynamics use, `read_records`
    the reader of a run's diagnostic records the item clusters are found in (`report.clusters`)."""
    paths = [Path(path) for path in options.runs]
    collected = collect(paths)
    failed = failed_runs(collected.runs, collected.predictions,
                         FailedRule(options.failed_margin, options.constant_share))
    all_results = collected.results_with_flags()
    kept_results, predictions = all_results, collected.predictions
    if options.exclude_failed:
        kept_results, predictions = without_failed(all_results, failed), without_failed(predictions, failed)
    if options.compare:
        check_conditions(kept_results, *options.compare)
    if options.compare_langs:
        check_languages(kept_results, *options.compare_langs)
        check_aligned(predictions, *options.compare_langs, "compare_langs")
    check_consistency_pair(options.consistency_pair, predictions)
    flagged = flagged_items([Path(folder) for folder in options.dataqa]) if options.dataqa else None
    read_records = remembered(read_records)
    clusters = item_clusters(options.cluster, predictions, collected.runs, read_records)
    # read here, so an unreadable dynamics file stops the report before anything is written
    dynamics = read_run_dynamics(without_failed(collected.runs, failed) if options.exclude_failed else collected.runs)
    records = [(path, record) for path in paths if path.is_dir() and (record := read_record(path)) is not None]
    out = Path(options.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the output folder ({err.strerror})", path=out,
                        fix="choose another out=DIR") from None
    return Context(options, paths, out, collected, failed, all_results, kept_results, predictions, flagged, dynamics,
                   annotate, clusters, read_records, records)


def check_consistency_pair(pair: list[str] | None, predictions: pd.DataFrame) -> None:
    """Both languages of `consistency_pair` must have runs with predictions."""
    if not pair:
        return
    missing = sorted(set(pair) - set(predictions["lang"]))
    if missing:
        raise UserError(f"consistency_pair: no runs with predictions in {', '.join(missing)}",
                        fix=f"choose from: {', '.join(sorted(set(predictions['lang']))) or 'none'}")
    check_aligned(predictions, *pair, "consistency_pair")


def flagged_items(folders: list[Path]) -> dict[str, set[str]]:
    """Per language, the idx of diagnostic items with a translation finding (line or word level,
    premise == hypothesis) in the `flagged.jsonl` of `python -m stability.dataqa` folders."""
    items: dict[str, set[str]] = {}
    for folder in folders:
        for flag in read_flags(folder / FLAGGED_FILE):
            if flag.role == "diagnostic" and flag.check in TRANSLATION_CHECKS:
                items.setdefault(flag.lang, set()).add(str(flag.idx))
    return items
