"""The measure registry (judged.measures.registry) is the one place a measure is declared:
parsing, printing, conventions, trec_eval names, completion and ``judged measures`` all
read it, and every record is complete."""

import ast
import json
import pathlib

import pytest

import judged

from judged.cli import main
from judged.cli.completion_command import measure_words
from judged.core.errors import MeasureError
from judged.core.measures import Measure
from judged.core.measures.params import PARAMS
from judged.core.measures.registry import FAMILIES, NAMES, trec_table


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_record_is_complete_and_its_examples_round_trip(name):
    f = FAMILIES[name]
    assert f.summary and f.explanation.strip() and f.source, name
    assert f.cutoff in ("required", "optional", "none") and f.aggregate in ("mean", "sum", "geometric-mean")
    assert set(f.params) <= set(PARAMS)
    assert hasattr(f.kernel, "compute")
    assert f.examples, "shell completion offers an example of every family"
    for text in f.examples:
        m = Measure.parse(text)
        assert m.name == name and Measure.parse(str(m)) == m
        assert m.convention().startswith(m.short + " ")
    for spelling in (name, *f.aliases):
        assert NAMES[spelling.lower()] == name


def test_trec_eval_names_parse_and_print_back():
    for trec, (name, t) in trec_table().items():
        cutoffs = t.cutoffs
        if t.levels:
            m = Measure.parse(f"{trec}.{t.levels[0]}")
            assert m.name == name and m.trec_eval_name == f"{trec}_{t.levels[0]:.2f}"
        elif cutoffs:
            for k in cutoffs[:2]:
                m = Measure.parse(f"{trec}.{k}")
                assert m == Measure(name, k) or m.name == name
                assert Measure(name, k).trec_eval_name == f"{trec}_{k}" or trec in ("ndcg_cut", "map_cut")
        else:
            assert Measure.parse(trec).name == name
    assert Measure.parse("ndcg_cut.10").trec_eval_name == "ndcg_cut_10"
    assert Measure.parse("map_cut_100").trec_eval_name == "map_cut_100"
    assert Measure.parse("AP").trec_eval_name == "map"
    assert Measure.parse("P(rel=2)@5").trec_eval_name == "P(rel=2)@5"  # not trec_eval's with -l 1


def test_parameters_are_checked_from_the_record():
    with pytest.raises(MeasureError, match="P takes no parameter gain"):
        Measure.parse("P(gain=exp)@5")
    with pytest.raises(MeasureError, match="needs a cutoff"):
        Measure.parse("P")
    with pytest.raises(MeasureError, match="takes no cutoff"):
        Measure.parse("Rprec@5")
    with pytest.raises(MeasureError, match="judged measures lists them"):
        Measure.parse("nDCGG@10")
    # a parameter is named as the measure spells it (RBP's p=, NRBP's beta=)
    with pytest.raises(MeasureError, match=r"^p must lie in \[0, 1\], not 2"):
        Measure.parse("RBP(p=2)")
    with pytest.raises(MeasureError, match=r"^beta must lie in \[0, 1\], not 1.5"):
        Measure.parse("NRBP(beta=1.5)")


def test_completion_offers_every_family():
    words = measure_words()
    assert {Measure.parse(w).name for w in words} == set(FAMILIES)


def test_judged_measures_lists_every_family_with_its_parameters(capsys):
    code, out, _ = cli(capsys, "measures")
    assert code == 0
    for f in FAMILIES.values():
        assert f"\n{f.name} " in "\n" + out
    assert "nDCG(gain, discount, base, p, ideal, unjudged, maxgrade)[@k]" in out
    code, out, _ = cli(capsys, "measures", "--format", "json")
    listed = json.loads(out)["measures"]
    assert [m["name"] for m in listed] == list(FAMILIES)
    ndcg = listed[0]
    assert {"name": "ideal", "type": "str", "default": "judged", "choices": ["judged", "retrieved"]}.items() <= \
        next(p for p in ndcg["parameters"] if p["name"] == "ideal").items()


def test_judged_measures_name_explains_with_the_convention_applied(capsys):
    # as trec_eval -h -m ndcg_cut: what it is, then (judged's addition) the convention string
    code, out, _ = cli(capsys, "measures", "ndcg_cut")
    assert code == 0 and out.startswith("nDCG: normalised discounted cumulative gain")
    assert "nDCG@k = DCG@k / IDCG@k" in out and "trec_eval names: ndcg_cut.k, ndcg" in out
    assert out.rstrip().endswith(Measure.parse("nDCG@10").convention())
    code, out, _ = cli(capsys, "measures", "nDCG(gain=exp)@5")
    assert out.rstrip().endswith(Measure.parse("nDCG(gain=exp)@5").convention())
    code, out, _ = cli(capsys, "measures", "map", "--format", "json")
    d = json.loads(out)
    assert d["name"] == "AP" and d["convention"] == Measure.parse("AP").convention() and "map" in d["trec_eval"]
    assert cli(capsys, "measures", "nope")[0] != 0


def test_bounded_measures_are_averaged():
    # judged holes averages each run's per-query bounds arithmetically: a boundable family with
    # another aggregate (sum, geometric mean) would need its own rule there first
    assert {f.name: f.aggregate for f in FAMILIES.values() if f.boundable} == \
        {f.name: "mean" for f in FAMILIES.values() if f.boundable}


def test_the_listing_marks_the_bounded_families(capsys):
    # judged holes' and meta holdout's -m help points here rather than listing names by hand
    from judged.core.measures.registry import BOUNDED

    assert main(["measures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    marked = [lines[i - 1].split()[0] for i, line in enumerate(lines) if line.endswith("  bounds")]
    assert marked == list(BOUNDED)


# -- no branch on a family's name outside judged.core.measures ---------------------------------------
# What an analysis asks of a family is a field of its record (boundable, reads, label_worth, normaliser,
# sampled, heavy_tail, headline, coverage, ...), never ``if m.name == "nDCG"``: a new family then answers
# every question where it is declared, and no analysis keeps its own list of names.

def _family_names_in(node, constants) -> bool:
    """Whether ``node`` is a family's name, a literal collection holding one, or a name bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in FAMILIES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_family_names_in(e, constants) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:  # frozenset((...))
        return node.func.id in ("frozenset", "set", "tuple") and _family_names_in(node.args[0], constants)
    return isinstance(node, ast.Name) and node.id in constants


def branches_on_family_names(source: str) -> list[str]:
    """Every comparison in ``source`` of something with a family's name (``m.name == "DCG"``,
    ``target in ("AP", "R")``) or with a module-level collection of family names, or ``BOUNDED``."""
    tree = ast.parse(source)
    constants = {"BOUNDED"}  # the registry's names of the bounded families: ask family.boundable
    for n in tree.body:
        if isinstance(n, ast.Assign) and _family_names_in(n.value, set()):
            constants |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return [f"{n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree) if isinstance(n, ast.Compare)
            and any(_family_names_in(side, constants) for side in (n.left, *n.comparators))]


def test_the_scan_finds_a_branch_on_a_family_name():
    found = branches_on_family_names('LINEAR = ("DCG", "P")\nif m.name == "nDCG" or t in ("AP", "R"):\n    pass\n'
                                     'ok = [m for m in ms if m.name in LINEAR or m.name not in BOUNDED]\n'
                                     'if kind == "gain" or m.family.boundable:\n    pass\n')
    assert found == ["2: m.name == 'nDCG'", "2: t in ('AP', 'R')", "4: m.name in LINEAR", "4: m.name not in BOUNDED"]


def test_no_branch_on_a_family_name_outside_core_measures():
    src = pathlib.Path(judged.__file__).parent
    found = [f"{p.relative_to(src)}:{hit}" for p in sorted(src.rglob("*.py"))
             if p.parent != src / "core" / "measures" for hit in branches_on_family_names(p.read_text())]
    assert found == [], "ask the family's registry record (a field of Family), not its name:\n" + "\n".join(found)
