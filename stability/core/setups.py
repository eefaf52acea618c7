"""Data-setup names (e.g. `rte+mnli10000`), built for run paths and records and parsed back
by the report: both directions live here so they cannot drift apart. Also the tag that
keeps runs scored on another diagnostic set (a generated suite, a file) in folders of
their own.

Names: `<base>[+<mixed><N>|+<mixed>_all][+<Feature><presence>]`. The base is `rte` (the
language's own training split) or the name of the NLI dataset trained on instead
(`data.train_set.name`); the mixed-in part names English MNLI (`rte+mnli10000`) or another
NLI dataset (`data.mix`, e.g. translate-train `rte+xnli10000`); a feature-control suffix
follows MNLI's count (`rte+mnli10000+Negation50`). Dataset names are lower case and end in a
letter (`schemas.nli.NAME`), so `<mixed><N>` reads back as name and size.

A run scored on other languages' diagnostic sets as well (`data.eval_langs`) is a cross-lingual
run: its setup ends in `@<training language>` (`rte@en`: trained on English RTE), in every
language it is scored in, so its French scores never pool with runs trained in French
(`rte`), and its own language's scores sit beside them under one condition.
"""
from __future__ import annotations

import re
from pathlib import Path

BASE_SETUP = "rte"
MNLI = "mnli"
TRAINED_IN = "@"


def _unset(value: object) -> bool:
    return value in (None, "None", "null", "")


def setup_name(n_samples: object, feature: object = None, presence: object = None, mix_n_samples: object = 0,
               mix_name: object = None, train_set: object = None, eval_langs: object = (),
               lang: object = None) -> str:
    """`rte`, `rte+mnli<N>`, `rte+mnli_all`, `rte+mnli<N>+<Feature><presence>`, `rte+<mix_name><N>`,
    with `train_set` (a dataset's name) in place of `rte` when the run trains on it, and
    `@<lang>` after it when the run is scored in other languages too (`eval_langs`)."""
    name = BASE_SETUP if _unset(train_set) else str(train_set)
    for mixed, count in ((MNLI, n_samples), (mix_name, mix_n_samples)):
        text = str(count).strip().lower()
        if text not in ("0", "none", ""):
            name += f"+{mixed}_all" if text == "all" else f"+{mixed}{text}"
    if not _unset(feature):
        slug = re.sub(r"[^A-Za-z0-9]+", "-", str(feature)).strip("-")
        share = f"{float(presence):g}" if not _unset(presence) else ""
        name += f"+{slug}{share}"
    return name + (f"{TRAINED_IN}{lang}" if eval_langs else "")


def trained_in(setup: str) -> tuple[str, str]:
    """(the setup's training-data part, its cross-lingual mark): `rte+mnli10000@en` →
    (`rte+mnli10000`, `@en`); (`rte`, ``) for a run scored in its own language only."""
    data, mark, lang = setup.partition(TRAINED_IN)
    return data, mark + lang


def diagnostic_tag(choice: object, suite: object = None, n: object = None, seed: object = None) -> str:
    """`` for the language's own diagnostic set; `@suite-<name>-n<N>-seed<K>` for a generated
    suite, `@<file stem>` for a file: appended to the experiment folder, so a run scored on
    another set never replaces (or mixes in a report with) the ordinary run of its seed."""
    if _unset(choice):
        return ""
    if str(choice) == "generated":
        return f"@suite-{suite}-n{n}-seed{seed}"
    return "@" + re.sub(r"[^A-Za-z0-9._-]+", "-", Path(str(choice)).stem).strip("-")


_MIXED = r"\+(?P<mixed>[a-z](?:[a-z0-9-]*[a-z])?)(?P<n>\d+|_all)"
_SETUP_NAME = re.compile(rf"^(?P<base>[a-z][a-z0-9-]*)(?:{_MIXED})?(?=\+|$)")
_FAMILY = re.compile(r"^(?P<base>[a-z][a-z0-9-]*)\+(?P<mixed>[a-z](?:[a-z0-9-]*[a-z])?)$")


def n_added_from_setup(setup: str) -> float:
    """Examples mixed in, read from the setup name: `rte` → 0, `rte+mnli<N>` / `rte+xnli<N>` → N.

    NaN when the name does not say (`…_all`, a base other than `rte` with nothing mixed in,
    names outside the convention); run directories carry the real count in metrics.json instead.
    """
    match = _SETUP_NAME.match(trained_in(setup)[0])
    if match is None or match.group("n") == "_all":
        return float("nan")
    if match.group("n") is None:
        return 0.0 if match.group("base") == BASE_SETUP else float("nan")
    return float(match.group("n"))


def setup_family(setup: str) -> str:
    """The setup name without its size: the setups one size curve joins. MNLI's sizes join their
    base (`rte+mnli1000`, `rte+mnli5000`, `rte` → `rte`; `rte+mnli1000+Negation50` →
    `rte+Negation50`); another dataset's keep its name (`rte+xnli1000` → `rte+xnli`), so
    MNLI and translate-train are two curves; a cross-lingual mark stays (`rte+mnli1000@en` → `rte@en`)."""
    data, mark = trained_in(setup)
    match = _SETUP_NAME.match(data)
    if match is None or match.group("n") is None:
        return setup
    kept = "" if match.group("mixed") == MNLI else "+" + match.group("mixed")
    return data[:match.start("mixed") - 1] + kept + data[match.end("n"):] + mark


def family_start(family: str) -> str | None:
    """The setup with nothing mixed in where a non-MNLI family's curve starts (`rte+xnli` → `rte`);
    None for other families (an MNLI family holds its base already)."""
    data, mark = trained_in(family)
    match = _FAMILY.match(data)
    return match.group("base") + mark if match and match.group("mixed") != MNLI else None
