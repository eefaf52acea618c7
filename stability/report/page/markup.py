"""report.md's sections as HTML, by markdown-it-py (CommonMark with GFM tables): the page shows
each section as report.md has it, word for word, so its tables, intervals and notes cannot drift
from the text version. Raw HTML in the markdown is escaped (a premise may hold `<b>`), and an image
is handed to `Figure`, which inlines it or puts an interactive view in its place."""
from __future__ import annotations

import re
from typing import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token

# the HTML that stands for the image `src` (a figure file beside report.md)
Figure = Callable[[str], str]


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


_MARKDOWN = _parser()


def section_html(markdown: str, figure: Figure) -> str:
    """The section's HTML; a paragraph that holds only images becomes their figures (no `<p>`
    around a view, which may hold block elements)."""
    tokens = _MARKDOWN.parse(markdown)
    parts, start = [], 0
    for i, token in enumerate(tokens):
        if token.type == "inline" and _only_images(token) and tokens[i - 1].type == "paragraph_open":
            parts.append(_MARKDOWN.renderer.render(tokens[start:i - 1], _MARKDOWN.options, {}))
            parts.extend(figure(child.attrGet("src") or "") for child in token.children or [] if child.type == "image")
            start = i + 2   # past paragraph_close
    parts.append(_MARKDOWN.renderer.render(tokens[start:], _MARKDOWN.options, {}))
    return "".join(parts)


def _only_images(token: Token) -> bool:
    children = [child for child in token.children or [] if child.type not in ("softbreak", "text") or child.content.strip()]
    return bool(children) and all(child.type == "image" for child in children)


def heading(markdown: str) -> str:
    """The section's first heading, for the navigation ("" for none)."""
    found = re.search(r"^#{1,6} +(.+?) *$", markdown, re.MULTILINE)
    return found.group(1).replace("`", "") if found else ""
