"""Suites: the YAML files under `suites/<lang>/`, read into templates and lexicons, and
generated into `Example`s in the diagnostic format.

The folder of suites is `SUITES_DIR` (the shipped ones) unless a caller names another `root`
(`generate suites_dir=DIR`): a language kept outside the package has its suites there.

`suites/<lang>/lexicon.yaml` holds the language's `dimensions` (computed, e.g. STARTSWITH)
and `lexicons`; every other `suites/<lang>/<suite>.yaml` holds `templates` (and may add
lexicons of its own). Template ids are shared across languages where the test is the same,
so a suite generated in two languages aligns by `idx`.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import yaml

from stability.core.errors import UserError
from stability.core.records import Example, parse_label
from stability.core.schemas.checks import items_per_template
from stability.core.taxonomy import COARSE_FIELDS, COARSE_OF, FINE_CATEGORIES
from stability.templates.engine import Item, Template, expand
from stability.templates.features import FeatureSchema
from stability.templates.lexicon import Lexicon, written_entry
from stability.templates.russian import inflected_entries
from stability.templates.syntax import SLOT, parse_text

SUITES_DIR = Path(__file__).parent / "suites"
LEXICON_FILE = "lexicon.yaml"
ALL = "all"
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_TEMPLATE_KEYS = {"id", "label", "categories", "premise", "hypothesis", "unordered", "different"}


class _LocatedDict(dict):
    """A YAML mapping that remembers its line, so errors point into the file."""

    line: int = 0


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> _LocatedDict:
    mapping = _LocatedDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: Path) -> dict:
    """A suite or lexicon file; malformed YAML is a user error naming the line."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        raise UserError(f"malformed YAML ({err.problem})", path=path,
                        line=mark.line + 1 if mark else None, fix="repair the file") from None
    except OSError as err:
        raise UserError(f"cannot read the file ({err.strerror})", path=path, fix="check the path") from None
    if not isinstance(data, dict):
        raise UserError("a suite file must be a mapping", path=path, fix="see the other suite files")
    return data


def _where(path: object, node: object) -> str:
    line = getattr(node, "line", None)
    return f"{path}:{line}" if line else str(path)


@dataclass(frozen=True)
class Resources:
    """What a language's templates draw on: its feature schema and its lexicons."""

    schema: FeatureSchema
    lexicons: Mapping[str, Lexicon]


def build_resources(data: dict, path: object, base: Resources | None = None) -> Resources:
    """Dimensions and lexicons of a mapping (lexicon.yaml, or a suite's own additions)."""
    schema = (base.schema if base else FeatureSchema()).with_dimensions(data.get("dimensions"), str(path))
    lexicons = dict(base.lexicons) if base else {}
    spec = data.get("lexicons") or {}
    if not isinstance(spec, dict):
        raise UserError("'lexicons' must map a lexicon name to its entries", path=path,
                        fix="write lexicons: {name: [...], ...}")
    for name, entries in spec.items():
        match = SLOT.match(str(name))
        if not match or match["number"] or name in lexicons:
            raise UserError(f"lexicon name '{name}' is taken or not a lower-case name without "
                            "trailing digits", path=_where(path, spec),
                            fix="digits number the slots of one lexicon (name1, name2)")
        lexicons[name] = read_lexicon(name, entries, schema, _where(path, entries) if
                                      isinstance(entries, _LocatedDict) else f"{path} (lexicon {name})")
    return Resources(schema, lexicons)


def read_lexicon(name: str, spec: object, schema: FeatureSchema, where: str) -> Lexicon:
    """A lexicon from its YAML value: a list of entries (`lexicon`), or {pymorphy3: ..., lemmas: [...]}
    (`russian`)."""
    if isinstance(spec, dict) and "pymorphy3" in spec:
        entries = inflected_entries(spec, schema, where)
    elif isinstance(spec, list) and spec:
        entries = [written_entry(i, value, schema, where) for i, value in enumerate(spec)]
    else:
        raise UserError(f"lexicon '{name}' must be a non-empty list of entries or a pymorphy3 "
                        "lemma list", path=where, fix="see the 'Test suites' section of the README")
    return Lexicon(tuple(entries), frozenset(schema.computed))


def _pairs(data: dict, key: str, where: str, split: bool) -> tuple:
    pairs = data.get(key) or []
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise UserError(f"'{key}' must be a list of pairs", path=where, fix=f"write {key}: [[a, b]]")
    if not split:
        return tuple((str(a), str(b)) for a, b in pairs)
    out = []
    for pair in pairs:
        halves = [str(side).split(".") for side in pair]
        if any(len(half) != 2 for half in halves):
            raise UserError(f"'{key}' pairs are slot.DIMENSION", path=where,
                            fix=f"write {key}: [[name1.GENDER, name2.GENDER]]")
        out.append(tuple((slot, dimension) for slot, dimension in halves))
    return tuple(out)


def build_template(data: object, schema: FeatureSchema, path: object) -> Template:
    """A template from its YAML mapping, checked field by field."""
    where = _where(path, data)
    if not isinstance(data, dict):
        raise UserError("a template must be a mapping", path=where, fix="see the other templates")
    unknown = set(data) - _TEMPLATE_KEYS
    if unknown:
        raise UserError(f"unknown template keys: {', '.join(sorted(map(str, unknown)))}", path=where,
                        fix=f"use {', '.join(sorted(_TEMPLATE_KEYS))}")
    template_id = data.get("id")
    if not isinstance(template_id, str) or not _ID.match(template_id):
        raise UserError(f"template id {template_id!r} must be lower-case letters, digits, '.', '_', '-'",
                        path=where, fix="give every template an id such as negation.entailed")
    label = parse_label(data.get("label"))
    if label is None:
        raise UserError(f"template '{template_id}': unknown label {data.get('label')!r}", path=where,
                        fix="use entailment or not_entailment")
    categories = data.get("categories")
    if not isinstance(categories, list) or not categories or any(c not in FINE_CATEGORIES for c in categories):
        raise UserError(f"template '{template_id}': categories must be a list of canonical names",
                        path=where, fix=f"use names among: {', '.join(FINE_CATEGORIES)}")
    texts = {}
    for key in ("premise", "hypothesis"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserError(f"template '{template_id}': missing {key}", path=where, fix=f"add {key}: '...'")
        texts[key] = parse_text(data[key], schema, where)
    return Template(id=template_id, label=label, categories=tuple(categories), premise=texts["premise"],
                    hypothesis=texts["hypothesis"], unordered=_pairs(data, "unordered", where, False),
                    different=_pairs(data, "different", where, True), where=where)


@dataclass(frozen=True)
class Suite:
    name: str
    templates: tuple[Template, ...]
    resources: Resources


def build_suite(data: dict, name: str, path: object, base: Resources) -> Suite:
    """A suite from its YAML mapping, on top of the language's resources."""
    unknown = set(data) - {"templates", "lexicons", "dimensions"}
    if unknown:
        raise UserError(f"unknown keys: {', '.join(sorted(map(str, unknown)))}", path=path,
                        fix="a suite file holds templates (and optionally lexicons, dimensions)")
    resources = build_resources(data, path, base) if ("lexicons" in data or "dimensions" in data) else base
    entries = data.get("templates")
    if not isinstance(entries, list) or not entries:
        raise UserError("the suite has no templates", path=path, fix="add templates: [...]")
    templates = tuple(build_template(entry, resources.schema, path) for entry in entries)
    return Suite(name, templates, resources)


def languages(root: Path = SUITES_DIR) -> tuple[str, ...]:
    """Languages with suites (a folder with a lexicon.yaml) in `root`."""
    return tuple(sorted(path.name for path in root.iterdir() if (path / LEXICON_FILE).is_file()))


def suite_names(lang: str, root: Path = SUITES_DIR) -> tuple[str, ...]:
    """The suites of a language (file names without .yaml)."""
    check_language(lang, root)
    return tuple(sorted(path.stem for path in (root / lang).glob("*.yaml") if path.name != LEXICON_FILE))


def check_language(lang: str, root: Path = SUITES_DIR) -> None:
    """`root` holds `lang`'s suites; else one line naming the languages it holds and what to add."""
    known = languages(root)
    if lang not in known:
        raise UserError(f"no test suites for language '{lang}'", path=root,
                        fix=(f"use one of: {', '.join(known)}, or " if known else "")
                        + f"add {lang}/{LEXICON_FILE} and its suite files there (docs/extending.md, \"A language\")")


@functools.lru_cache(maxsize=None)
def language_resources(lang: str, root: Path = SUITES_DIR) -> Resources:
    """The language's lexicon.yaml, read once per process (Russian forms are inflected here)."""
    check_language(lang, root)
    path = root / lang / LEXICON_FILE
    return build_resources(read_yaml(path), path)


@functools.lru_cache(maxsize=None)
def check_suite(lang: str, name: str, root: Path = SUITES_DIR) -> None:
    """`name` is one of the language's suites, or all."""
    if name != ALL and name not in suite_names(lang, root):
        raise UserError(f"no suite '{name}' for {lang}",
                        fix=f"use one of: {', '.join(suite_names(lang, root) + (ALL,))}")


def load_suite(lang: str, name: str, root: Path = SUITES_DIR) -> Suite:
    check_suite(lang, name, root)
    path = root / lang / f"{name}.yaml"
    return build_suite(read_yaml(path), name, path, language_resources(lang, root))


def load_suites(lang: str, suite: str = ALL, root: Path = SUITES_DIR) -> list[Suite]:
    """One suite, or all of the language's; template ids must be unique across them."""
    suites = [load_suite(lang, name, root) for name in (suite_names(lang, root) if suite == ALL else (suite,))]
    seen: dict[str, str] = {}
    for loaded in suites:
        for template in loaded.templates:
            if template.id in seen:
                raise template.error(f"the id is also used at {seen[template.id]}", "give each template its own id")
            seen[template.id] = template.where
    return suites


def coarse_of(categories: tuple[str, ...]) -> tuple[str, ...]:
    """The coarse categories of fine ones, in the order of the diagnostic files' fields."""
    present = {COARSE_OF[name] for name in categories}
    return tuple(coarse for coarse in COARSE_FIELDS.values() if coarse in present)


def to_example(item: Item, lang: str, suite: str) -> Example:
    template = item.template
    return Example(idx=item.idx, premise=item.premise, hypothesis=item.hypothesis, label=template.label,
                   lang=lang, source=f"suite:{suite}", categories=template.categories,
                   coarse=coarse_of(template.categories), template=template.id, features=item.features)


def generate_suite(lang: str, suite: str = ALL, n: object = None, seed: int = 0,
                   root: Path = SUITES_DIR) -> list[Example]:
    """The items of a language's suite(s) in `root`: n per template (None or 'all': every
    combination), seeded."""
    n = items_per_template("n", n)
    return [to_example(item, lang, loaded.name)
            for loaded in load_suites(lang, str(suite), root)
            for template in loaded.templates
            for item in expand(template, loaded.resources.lexicons, n, seed)]
