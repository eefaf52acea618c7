"""`## Where the variance comes from`: each category's MCC variance over a seed_init × seed_order
grid split into initialisation, data order and residual (two-way ANOVA without replication)."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num, table
from stability.core.taxonomy import COARSE_CATEGORIES, FINE_CATEGORIES
from stability.report import figures
from stability.report.collect import OVERALL
from stability.report.context import Context
from stability.report.section import Built, figure_links
from stability.report.seed_design import GRID_KEY, grid_scores
from stability.statistics.variance import variance_table

# what the share_* columns are, written into every row of variance_sources.csv
METHOD = "anova_ss_without_replication"
_DECIMALS = 12   # shares equal up to rounding count as equal


def build(context: Context) -> Built | None:
    """variance_sources.csv and variance_sources.png; None unless some runs form a full grid."""
    scores = grid_scores(context.results, context.collected.runs)
    if scores.empty:
        return None
    sources = canonical_order(variance_table(scores, [*GRID_KEY, "level", "category"]).assign(method=METHOD))
    drawn = [figures.variance_shares_plot(sources, context.out)] if context.options.figures else []
    rows = []
    for (lang, setup, family, seed), grid in sources.groupby(GRID_KEY, sort=True):
        overall = grid[grid["category"] == OVERALL].iloc[0]
        fine = grid[(grid["level"] == "fine") & grid["share_init"].notna()]
        init, order = fine["share_init"].round(_DECIMALS), fine["share_order"].round(_DECIMALS)  # 1/3 vs 1/3 − ε
        rows.append([lang, setup, family, seed, f"{overall.n_init} × {overall.n_order}",
                     " / ".join(num(overall[f"share_{source}"], 2) for source in ("init", "order", "residual")),
                     " / ".join(num(fine[f"share_{source}"].mean(), 2) for source in ("init", "order", "residual")),
                     f"{int((init > order).sum())} / {int((order > init).sum())} of {len(fine)}"])
    text = ("## Where the variance comes from\n\nRuns of one (language, setup, variant family, seed) that cross "
            "every `seed_init` with every `seed_order` (one run per cell) form a grid. Each category's MCC "
            "over the grid is split by a two-way ANOVA without replication into initialisation (`seed_init`: "
            "classifier head, dropout), data order (`seed_order`) and a residual (their interaction and noise, "
            "which one run per cell cannot separate); the shares are the sums of squares' shares "
            "(SS_x / SS_total, `share_*`). `variance_sources.csv` also gives the sums of squares and the "
            "random-effects variance components (`var_*`, from the mean squares) for every level and "
            "category.\n\n"
            + table(["lang", "setup", "family", "seed", "grid", "overall MCC: init / order / residual",
                     "fine categories, mean share: init / order / residual", "categories init > order / order > init"],
                    rows)
            + ("\n" + figure_links(drawn) if drawn else ""))
    return Built(text, {"variance_sources.csv": sources}, drawn)


def canonical_order(sources: pd.DataFrame) -> pd.DataFrame:
    """Per grid: overall, then the coarse and the fine categories in taxonomy order."""
    rank = {name: i for i, name in enumerate((OVERALL, *COARSE_CATEGORIES, *FINE_CATEGORIES))}
    return sources.assign(_rank=sources["category"].map(rank)).sort_values([*GRID_KEY, "_rank"]) \
        .drop(columns="_rank").reset_index(drop=True)
