"""Russian lexicons from lemmas: pymorphy3 inflects each lemma to the listed feature bundles,
and every generated form is parsed back to check it carries the requested features.

    name:
      pymorphy3: {pos: NOUN, tags: [Name], forms: [SG.NOM, SG.ACC, SG.DAT]}
      lemmas: [Анна, Пётр]

A noun's grammatical gender (from its dictionary entry) is added to all its forms, so it
becomes an inherent feature that verbs and adjectives agree with. VERBFORM=PTCP means the
short participle (the form of the Russian passive), NFIN the infinitive.
"""
from __future__ import annotations

import functools

from stability.core.errors import UserError, require
from stability.templates.features import Bundle, FeatureSchema, bundle_text
from stability.templates.lexicon import Entry, make_entry

# UniMorph value -> OpenCorpora grammeme (pymorphy3's tag set)
GRAMMEMES: dict[str, str] = {
    "NOM": "nomn", "ACC": "accs", "GEN": "gent", "DAT": "datv", "INS": "ablt", "ESS": "loct",
    "SG": "sing", "PL": "plur", "MASC": "masc", "FEM": "femn", "NEUT": "neut",
    "PRS": "pres", "PST": "past", "FUT": "futr", "1": "1per", "2": "2per", "3": "3per",
    "IPFV": "impf", "PFV": "perf", "ACT": "actv", "PASS": "pssv", "PTCP": "PRTS", "NFIN": "INFN",
}
GENDERS: dict[str, str] = {"masc": "MASC", "femn": "FEM", "neut": "NEUT"}
# the part of speech of a lemma's dictionary form
_LEMMA_POS = {"NOUN": "NOUN", "VERB": "INFN"}
# proper-name readings are taken only when asked for (марка is a stamp, not the name Марк)
_PROPER = {"Name", "Surn", "Patr", "Geox", "Orgn"}
_INSTALL = "pip install 'nli-stability[templates]' (pymorphy3 and its Russian dictionary)"


@functools.lru_cache(maxsize=1)
def analyzer():
    """The pymorphy3 analyzer (loading its dictionary takes a moment, so once per process)."""
    pymorphy3 = require("pymorphy3", "Russian lexicons are inflected with pymorphy3, which is not installed",
                        fix=_INSTALL)
    return pymorphy3.MorphAnalyzer(lang="ru")


def grammemes(bundle: Bundle) -> set[str]:
    """The OpenCorpora grammemes of a UniMorph bundle."""
    return {GRAMMEMES[value] for value in bundle.values()}


def _lemma_parse(lemma: str, pos: str, tags: set[str], where: str):
    for parse in analyzer().parse(lemma):
        wanted = parse.tag.POS == _LEMMA_POS[pos] and tags <= parse.tag.grammemes
        if wanted and parse.is_known and parse.normal_form == lemma.lower() \
                and not (_PROPER - tags) & parse.tag.grammemes:
            return parse
    # a guessed paradigm (an unknown word) is not trusted to inflect
    raise UserError(f"pymorphy3 knows no {pos} '{lemma}'" + (f" tagged {', '.join(sorted(tags))}" if tags else ""),
                    path=where, fix="check the spelling, the pos and the tags of this lemma")


def parses_back(form: str, lemma: str, wanted: set[str]) -> bool:
    """Whether pymorphy3 reads `form` as a form of `lemma` carrying every grammeme in `wanted`."""
    lemma = lemma.lower()
    for parse in analyzer().parse(form):
        tag = parse.tag.grammemes | {parse.tag.POS}
        if parse.normal_form == lemma and wanted <= tag:
            return True
    return False


def _inflect(lemma: str, parse, bundle: Bundle, where: str) -> str:
    wanted = grammemes(bundle)
    if wanted == {"INFN"}:
        form = parse.word
    else:
        inflected = parse.inflect(wanted - {"INFN"})
        if inflected is None:
            raise UserError(f"pymorphy3 cannot inflect '{lemma}' to {bundle_text(bundle)}", path=where,
                            fix="remove this bundle from the lexicon's forms or choose another lemma")
        form = inflected.word
    if not parses_back(form, lemma, wanted):
        raise UserError(f"'{form}', generated for '{lemma}' {bundle_text(bundle)}, does not parse back "
                        "to those features", path=where, fix="write this word's forms out instead")
    return form[0].upper() + form[1:] if lemma[0].isupper() else form


def inflected_entries(spec: dict, schema: FeatureSchema, where: str) -> list[Entry]:
    """One entry per lemma, with a form for every listed bundle."""
    options, lemmas = spec.get("pymorphy3"), spec.get("lemmas")
    fix = "write pymorphy3: {pos: NOUN|VERB, forms: [BUNDLE, ...]} and lemmas: [...]"
    if not isinstance(options, dict) or not isinstance(lemmas, list) or not lemmas \
            or options.get("pos") not in _LEMMA_POS or not isinstance(options.get("forms"), list):
        raise UserError("malformed pymorphy3 lexicon", path=where, fix=fix)
    unknown = (set(spec) - {"pymorphy3", "lemmas"}) | (set(options) - {"pos", "tags", "forms"})
    if unknown:
        raise UserError(f"unknown keys {', '.join(sorted(map(str, unknown)))}", path=where, fix=fix)
    bundles = [schema.bundle(text, where) for text in options["forms"]]
    for bundle in bundles:
        missing = [value for value in bundle.values() if value not in GRAMMEMES]
        if missing:
            raise UserError(f"no pymorphy3 grammeme for {', '.join(missing)}", path=where,
                            fix=f"use values among {', '.join(GRAMMEMES)}")
    tags = set(options.get("tags") or ())
    entries = []
    for index, lemma in enumerate(lemmas):
        lemma = str(lemma)
        parse = _lemma_parse(lemma, options["pos"], tags, where)
        gender = {"GENDER": GENDERS[parse.tag.gender]} if options["pos"] == "NOUN" and parse.tag.gender in GENDERS else {}
        forms = [({**bundle, **gender}, _inflect(lemma, parse, bundle, where)) for bundle in bundles]
        entries.append(make_entry(index, forms, schema, lemma=lemma))
    return entries
