"""The sections of report.md, in page order: each a module whose `build(context)` returns its
tables, figures and markdown (`stability.report.section`). A new section is a new module here
and one entry in `SECTIONS`."""
from __future__ import annotations

from stability.report.section import Section
from stability.report.sections import (adaptive, agreement, categories, category_learning, comparison,
                                       comparison_tests, consistency, data_map, expected_max, extra_eval, failed,
                                       inputs, instability_atlas, intervals, language_tests, languages, probing,
                                       seed_power, sizes, stabilizers, suites, summary, trust, variance_sources)

SECTIONS: tuple[Section, ...] = (
    inputs.build,
    adaptive.build,
    trust.build,
    summary.build,
    extra_eval.build,
    failed.build,
    categories.build,
    languages.build,
    agreement.build,
    intervals.build,
    comparison.build,
    comparison_tests.build,
    language_tests.build,
    stabilizers.build,
    sizes.build,
    variance_sources.build,
    expected_max.build,
    seed_power.build,
    consistency.build,
    category_learning.build,
    data_map.build,
    instability_atlas.build,
    suites.build,
    probing.build,
)
