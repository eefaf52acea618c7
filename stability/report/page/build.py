"""report.html: report.md's sections, in its order and words, as one page that opens from file://
with nothing fetched: styles, script, data and the static figures (base64 PNGs) all inline.

The page's views (interactive heat maps, data maps, the atlas) come from the sections' own tables
(`View`) and take the place of the PNG each stands for, or go at their section's end where no PNG
was drawn (`figures=false`). They are drawn by a hand-written script (page.js, 19 kB) rather than a
plotting library: what they need is coloured table cells, one canvas scatter per group and sortable
tables, while a self-contained plotly page inlines plotly.js, several MB minified, into a page whose
own content is 3 MB at the study's size, and a browser parses it before anything is usable
(docs/benchmarks.md, "The report's page": 3.1 MB, usable in under half a second).
"""
from __future__ import annotations

import base64
import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Callable

import matplotlib

from stability.report.context import Context
from stability.report.page import PAGE_FILE
from stability.report.page.dynamics import atlas_views, data_map_views
from stability.report.page.heatmaps import heatmap_views
from stability.report.page.items import item_data
from stability.report.page.markup import heading, section_html
from stability.report.page.view import Tables, View
from stability.report.section import Built, Section
from stability.report.sections import categories, data_map, instability_atlas
from stability.statistics.figures import CMAP

PALETTE_STOPS = 11   # colours of the heat maps' diverging scale, the PNGs' colormap sampled from −1 to 1
VIEWS: dict[Section, Callable[[Context, Tables], list[View]]] = {
    categories.build: heatmap_views, data_map.build: data_map_views, instability_atlas.build: atlas_views}


def write_page(context: Context, built: list[tuple[Section, Built]]) -> Path:
    """report.html beside report.md, from every section that wrote markdown, in page order."""
    tables = {name: table for _, part in built for name, table in part.tables.items()}
    views: list[View] = []
    sections, links, ids = [], [], set()
    for section, part in built:
        if not part.markdown:
            continue
        own = {view.figure or str(i): view for i, view in enumerate(VIEWS[section](context, tables))} \
            if section in VIEWS else {}

        def figure(src: str) -> str:
            view = own.pop(src, None)
            return _image(context.out, src) if view is None else _slot(view, views)

        body = section_html(part.markdown, figure) + "".join(_slot(view, views) for view in own.values())
        title = heading(part.markdown)
        anchor = _anchor(title, ids)
        sections.append(f'<section id="{anchor}">{body}</section>')
        links.append(f'<li><a href="#{anchor}">{html.escape(title)}</a></li>')
    data = {"views": [{"kind": view.kind, "data": view.data} for view in views], "items": item_data(context),
            "palette": _palette()}
    page = _PAGE.format(title=html.escape(heading(built[0][1].markdown) if built else "report"),
                        css=_asset("page.css"), filters=_filters(context), links="".join(links),
                        sections="\n".join(sections), data=_json(data), script=_asset("page.js"))
    path = context.out / PAGE_FILE
    path.write_text(page, encoding="utf-8")
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>{title}</title><style>{css}</style></head>
<body><nav><strong>{title}</strong>{filters}<ol>{links}</ol></nav>
<main>{sections}</main>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="page-data">{data}</script>
<script>{script}</script>
</body></html>
"""


def _slot(view: View, views: list[View]) -> str:
    """The placeholder the script replaces by the view."""
    views.append(view)
    return f'<div data-view="{len(views) - 1}"></div>'


def _image(folder: Path, src: str) -> str:
    """A figure beside report.md, inline; a missing one says so."""
    path = folder / src
    if not path.is_file():
        return f"<p>Figure {html.escape(src)} not found beside report.md.</p>"
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{encoded}" alt="{html.escape(path.stem)}">'
            f"<figcaption>{html.escape(src)}</figcaption></figure>")


def _anchor(title: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
    anchor, n = base, 1
    while anchor in taken:
        n += 1
        anchor = f"{base}-{n}"
    taken.add(anchor)
    return anchor


def _filters(context: Context) -> str:
    """A select per facet with more than one value: every table with a lang, setup or variant column,
    and every view of one, shows the chosen value only."""
    results = context.all_results
    parts = []
    for facet, noun in (("lang", "languages"), ("setup", "setups"), ("variant", "variants")):
        values = sorted(results[facet].astype(str).unique())
        if len(values) < 2:
            continue
        options = "".join(f'<option value="{html.escape(v)}">{html.escape(v) or "(none)"}</option>' for v in values)
        parts.append(f'<label>{facet} <select data-facet="{facet}" id="filter-{facet}">'
                     f'<option value="">all {noun}</option>{options}</select></label>')
    return "".join(parts)


def _palette() -> list[list[int]]:
    colormap = matplotlib.colormaps[CMAP]
    return [[round(channel * 255) for channel in colormap(i / (PALETTE_STOPS - 1))[:3]] for i in range(PALETTE_STOPS)]


def _asset(name: str) -> str:
    return resources.files("stability.report.page").joinpath(name).read_text(encoding="utf-8")


def _json(data: dict) -> str:
    """The page's data inside its <script> element: `</` escaped so no text can end the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
