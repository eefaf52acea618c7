"""Data-setup names (e.g. `rte+mnli10000`), built for run paths and records and parsed back
by the report: both directions live here so they cannot drift apart. Also the tag that
keeps runs scored on another diagnostic set (a generated suite, a file) in folders of
their own.

Names: `rte`, `rte+mnli<N>`, `rte+mnli_all`, optionally with a feature-control suffix
(`rte+mnli10000+Negation50`).
"""
from __future__ import annotations

import re
from pathlib import Path

BASE_SETUP = "rte"


def setup_name(n_samples: object, feature: object = None, presence: object = None) -> str:
    """`rte`, `rte+mnli<N>`, `rte+mnli_all`, or `rte+mnli<N>+<Feature><presence>`."""
    text = str(n_samples).strip().lower()
    if text in ("0", "none", ""):
        return BASE_SETUP
    name = f"{BASE_SETUP}+mnli_all" if text == "all" else f"{BASE_SETUP}+mnli{text}"
    if feature not in (None, "None", ""):
        slug = re.sub(r"[^A-Za-z0-9]+", "-", str(feature)).strip("-")
        share = f"{float(presence):g}" if presence not in (None, "None", "") else ""
        name += f"+{slug}{share}"
    return name


def diagnostic_tag(choice: object, suite: object = None, n: object = None, seed: object = None) -> str:
    """`` for the language's own diagnostic set; `@suite-<name>-n<N>-seed<K>` for a generated
    suite, `@<file stem>` for a file: appended to the experiment folder, so a run scored on
    another set never replaces (or mixes in a report with) the ordinary run of its seed."""
    if choice in (None, "None", "null", ""):
        return ""
    if str(choice) == "generated":
        return f"@suite-{suite}-n{n}-seed{seed}"
    return "@" + re.sub(r"[^A-Za-z0-9._-]+", "-", Path(str(choice)).stem).strip("-")


_SETUP_NAME = re.compile(rf"^{BASE_SETUP}(?:\+mnli(\d+|_all))?(?:\+.+)?$")
_MNLI_PART = re.compile(r"\+mnli(?:\d+|_all)(?=\+|$)")


def n_added_from_setup(setup: str) -> float:
    """MNLI examples added, read from the setup name: `rte` → 0, `rte+mnli<N>` → N.

    NaN when the name does not say (`rte+mnli_all`, names outside the convention);
    run directories carry the real count in metrics.json instead.
    """
    match = _SETUP_NAME.match(setup)
    if match is None or match.group(1) == "_all":
        return float("nan")
    return float(match.group(1) or 0)


def setup_family(setup: str) -> str:
    """The setup name without its MNLI-size part: the setups one size curve joins."""
    return _MNLI_PART.sub("", setup)
