"""The template engine on small hand-written lexicons: agreement, switches, exclusion rules,
counts, sampling and the errors a suite author can make."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from stability.core.errors import UserError
from stability.templates.engine import expand
from stability.templates.suites import build_resources, build_suite, read_yaml

LEXICONS = {
    "dimensions": {"STARTSWITH": {"VOW": "^[AEIOUÉaeioué]", "CONS": ""}},
    "lexicons": {
        "name": [{"FEM.SG": "Marie"}, {"MASC.SG": "Pierre"}, {"FEM.SG": "Alice"}, {"MASC.SG": "Étienne"}],
        "group": [{"SG": "Marie"}, {"PL": "Marie et Pierre"}],
        "adj": [{"MASC.SG": "content", "FEM.SG": "contente", "MASC.PL": "contents", "FEM.PL": "contentes"},
                {"SG": "calme", "PL": "calmes"}],
        "num": [5, 10, 20, 50, 100],
        "act": ["chanté", "dansé", "nagé"],
        "verb": [{"PST": "a chanté", "PRS": "chante"}],
    },
}


def items(templates: str, n: int | None = None, seed: int = 0, lexicons: dict = LEXICONS):
    """Expand a suite written as YAML text against `lexicons`; items per template id."""
    resources = build_resources(lexicons, "<lexicons>")
    suite = build_suite(yaml.safe_load(textwrap.dedent(templates)), "test", "<suite>", resources)
    return {t.id: expand(t, resources.lexicons, n, seed) for t in suite.templates}


def template(premise: str, hypothesis: str = "x", **options) -> str:
    extra = "".join(f"\n        {key}: {value}" for key, value in options.items())
    return f"""
    templates:
      - id: t
        label: entailment
        categories: [Negation]
        premise: "{premise}"
        hypothesis: "{hypothesis}"{extra}
    """


def premises(templates: str, **kwargs) -> list[str]:
    return [item.premise for item in items(templates, **kwargs)["t"]]


def test_french_adjective_agrees_with_a_female_and_a_male_name():
    # slots vary in name order, the last fastest: adj, then name
    assert premises(template("{name} est {adj.SG.<name.GENDER>}.")) == [
        "Marie est contente.", "Pierre est content.", "Alice est contente.", "Étienne est content.",
        "Marie est calme.", "Pierre est calme.", "Alice est calme.", "Étienne est calme."]


def test_agreement_lists_dimensions_and_fixed_features_in_any_order():
    orders = ["{adj.<name.GENDER.NUMBER>}", "{adj.<name.NUMBER.GENDER>}", "{adj.<name.GENDER>.<name.NUMBER>}",
              "{adj.SG.<name.GENDER>}", "{adj.<name.GENDER>.SG}"]
    results = [premises(template(f"{{name}} : {order}")) for order in orders]
    assert all(result == results[0] for result in results)
    assert "Marie : contente" in results[0] and "Pierre : content" in results[0]


def test_inline_switch_picks_the_form_by_another_slots_feature():
    assert premises(template("{group} {est:group.SG|sont:group.PL} {adj.<group.NUMBER>.FEM}.")) == [
        "Marie est contente.", "Marie et Pierre sont contentes.", "Marie est calme.", "Marie et Pierre sont calmes."]
    # a computed dimension (elision) and a default branch
    assert premises(template("{qu':name.VOW|que }{name} {danse:name.FEM|dance}")) == [
        "Que Marie danse", "Que Pierre dance", "Qu'Alice danse", "Qu'Étienne dance"]


def test_a_switch_without_a_matching_branch_names_the_template():
    with pytest.raises(UserError, match=r"template 't'.*no alternative of \{elle:name.FEM\}"):
        items(template("{elle:name.FEM} {name}"))


def test_repeated_slots_never_take_the_same_value_and_unordered_keeps_one_order():
    ordered = [(item.premise) for item in items(template("{num1} {num2}"))["t"]]
    assert len(ordered) == 5 * 4 and all(a != b for a, b in (p.split() for p in ordered))
    unordered = [tuple(map(int, item.premise.split())) for item in items(template("{num1} {num2}",
                                                                                   unordered="[[num1, num2]]"))["t"]]
    assert unordered == [(5, 10), (5, 20), (5, 50), (5, 100), (10, 20), (10, 50), (10, 100), (20, 50),
                         (20, 100), (50, 100)]


def test_item_count_is_the_product_minus_the_exclusions():
    # 4 names (2 female, 2 male) in two slots, 5 numbers in an unordered pair, 3 activities
    plain = items(template("{name1} {name2} {num1} {num2} {act}", unordered="[[num1, num2]]"))["t"]
    assert len(plain) == (4 * 3) * (5 * 4 // 2) * 3 == 360
    differ = items(template("{name1} {name2} {num1} {num2} {act}", unordered="[[num1, num2]]",
                            different="[[name1.GENDER, name2.GENDER]]"))["t"]
    assert len(differ) == (2 * 2 + 2 * 2) * 10 * 3 == 240
    # an inherent feature written on a slot restricts it: female name1 only
    female = items(template("{name1.FEM} {name2} {act}"))["t"]
    assert len(female) == 2 * 3 * 3 == 18
    assert all(item.premise.split()[0] in ("Marie", "Alice") for item in female)


def test_idx_and_features_name_the_chosen_entries():
    first = items(template("{name1} {name2} {adj.SG.<name1.GENDER>}"))["t"][0]
    assert first.idx == "t:adj=0,name1=0,name2=1"
    # GENDER varies over the names and is recorded; NUMBER (always SG) is not; STARTSWITH is
    # computed and recorded only where the template reads it
    assert first.features == {"name1.GENDER": "FEM", "name2.GENDER": "MASC"}
    read = items(template("{qu':name.VOW|que }{name}"))["t"][2]
    assert read.features == {"name.GENDER": "FEM", "name.STARTSWITH": "VOW"}


def test_sampling_is_deterministic_ordered_and_depends_on_the_seed():
    suite = template("{name1} {name2} {act}")
    first, again = items(suite, n=5, seed=3)["t"], items(suite, n=5, seed=3)["t"]
    other = items(suite, n=5, seed=4)["t"]
    everything = [item.idx for item in items(suite)["t"]]
    assert [i.idx for i in first] == [i.idx for i in again]
    assert [i.idx for i in first] != [i.idx for i in other]
    assert len(first) == 5 and set(i.idx for i in first) <= set(everything)
    assert [i.idx for i in first] == sorted((i.idx for i in first), key=everything.index)
    assert len(items(suite, n=1000)["t"]) == len(everything) == 36


@pytest.mark.parametrize("text, message", [
    ("{adj.<name.GENDER>}", "several forms"),             # number missing: contente / contentes
    ("{verb.FUT}", "'a chanté' has no form for FUT"),
    ("{name.XYZ}", "unknown feature value 'XYZ'"),
    ("{color}", "no lexicon 'color'"),
    ("{adj.SG.<nme.GENDER>}", "'nme' is named but never rendered"),
    ("{adj.SG.<name.COLOR>}", "unknown dimension"),
    ("{name", "unbalanced braces"),
    ("{a:name.FEM|b|c:name.MASC}", "only the last alternative"),
])
def test_authoring_errors_are_user_errors(text, message):
    with pytest.raises(UserError, match=message):
        items(template(f"{{name}} {text}"))


def test_template_fields_are_checked():
    with pytest.raises(UserError, match="categories must be a list of canonical names"):
        items(template("{name}").replace("[Negation]", "[Negations]"))
    with pytest.raises(UserError, match="unknown label 'maybe'"):
        items(template("{name}").replace("label: entailment", "label: maybe"))
    with pytest.raises(UserError, match="unknown template keys: premisse"):
        items(template("{name}").replace("premise:", "premisse:"))
    with pytest.raises(UserError, match="unordered slots num1 and name1 come from different lexicons"):
        items(template("{num1} {name1}", unordered="[[num1, name1]]"))


def test_malformed_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "logic.yaml"
    path.write_text("templates:\n  - id: a\n    premise: [unclosed\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"logic.yaml:4: malformed YAML"):
        read_yaml(path)
