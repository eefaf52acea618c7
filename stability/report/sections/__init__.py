"""The sections of report.md, in page order: each a module whose `build(context)` returns its
tables, figures and markdown (`stability.report.section`). A new section is a new module here
and one entry in `SECTIONS`."""
from __future__ import annotations

from stability.report.section import Section
from stability.report.sections import (agreement, categories, comparison, consistency, extra_eval, failed, inputs,
                                       intervals, languages, probing, sizes, suites, summary)

SECTIONS: tuple[Section, ...] = (
    inputs.build,
    summary.build,
    extra_eval.build,
    failed.build,
    categories.build,
    languages.build,
    agreement.build,
    intervals.build,
    comparison.build,
    sizes.build,
    consistency.build,
    suites.build,
    probing.build,
)
