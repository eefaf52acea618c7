"""The data-setup name that goes into run paths and metrics.json (e.g. `rte+mnli10000`)."""
from __future__ import annotations

import re

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

