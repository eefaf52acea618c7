"""The rule-based annotator's features of the items a report shows (data maps, instability atlas).

The annotator (`annotators`) builds on `stability`, so the report never imports it: the command
(`report.cli`) hands it in (`Context.annotate`). It is an optional extra, and some languages need
spaCy or pymorphy3 models: a language it cannot annotate comes back with the reason, so a section
says so instead of failing.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from stability.core.errors import UserError, first_line

# what a missing extra, a missing language model or a language the annotator does not know raises
UNAVAILABLE = (ImportError, OSError, UserError)
# (premise, hypothesis) pairs and their language → per pair an `annotators.features.FeatureSet`:
# `.features` (found in premise or hypothesis), `.supported` and `.unsupported` (in that language)
Annotate = Callable[[list[tuple[str, str]], str], Sequence[Any]]
_NO_ANNOTATOR = "no annotator was given to the report"


def by_language(pairs: Mapping[str, list[tuple[str, str]]],
                annotate: Annotate | None) -> tuple[dict[str, list[Any]], dict[str, str]]:
    """Per language the FeatureSets of its pairs, and per language the annotator is unavailable for
    (or with no annotator at all), why."""
    found, failed = {}, {}
    for lang, its in sorted(pairs.items()):
        if annotate is None:
            failed[lang] = _NO_ANNOTATOR
            continue
        try:
            found[lang] = list(annotate(its, lang))
        except UNAVAILABLE as err:
            failed[lang] = first_line(err)
    return found, failed
