"""Golden strings: records, manifests and every measure's ``str()`` / ``convention()`` are
contracts (saved files are compared byte for byte by later versions). This test pins them,
and the per-query values behind them, on a fixed collection, so that a refactoring of the
engine that changes one byte fails here. ``JUDGED_WRITE_GOLDEN=1`` rewrites the file after
an intended change (review the diff)."""

import json
import os
from pathlib import Path

import pytest

import judged
import judged.compat.pytrec_eval as pytrec_eval
from judged.cli.completion_command import measure_words
from judged.cli.eval_command import trec_eval_name
from judged.core.conventions import Settings
from judged.analyses.holes.unjudged import holes_report
from judged.core.manifest import Manifest, evaluate_frozen, record
from judged.core.measures import Measure
from synth import make_collection, trec_qrels_text, trec_run_text

GOLDEN = Path(__file__).parent / "golden" / "canonical.json"

MEASURES = [
    "nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@10", "nDCG(discount=jk2002,base=3)@5", "nDCG(discount=power,p=1.5)@5",
    "nDCG(ideal=retrieved)@10", "nDCG(unjudged=condensed)@10", "nDCG(gains={0:0,1:1,2:3})@5", "nDCG(unjudged=min)@5",
    "nDCG(unjudged=max,maxgrade=3)@5", "DCG(gain=exp,discount=jk2002,base=2)@3", "AP", "AP@100", "AP(rel=2)",
    "AP(unjudged=condensed)", "P@5", "P(rel=2)@10", "P(unjudged=max)@5", "R@100", "R(unjudged=min)@10", "RR",
    "RR@10", "RR(unjudged=max)", "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=2)", "infAP", "Success@1",
    "Success(rel=2)@5", "NumRel", "NumRel(rel=2)", "NumRet", "NumRelRet", "Judged@10", "Complete@10", "Coverage",
    "Leak@10", "ndcg_cut.10", "map_cut.100", "recip_rank", "P.5", "nDCG(dcg='exp-log2')@10",
    # beyond trec_eval: max_rel's value is written into the gain ('2^2'), the form manifests froze
    "ERR@10", "ERR(max_rel=2)@10", "nERR(max_rel=3)@5", "RBP", "RBP(p=0.95)@10", "RBPResidual",
    "SDCG(max_rel=3)@10", "INST(max_rel=3)", "INSQ(max_rel=3,min_rel=1)", "Compat",
]
SETTINGS = [
    Settings(), Settings(complete=True), Settings(ties="input", no_relevant="skip"), Settings(ties="rank"),
    Settings(ignore_identical_ids=True, depth_cut=7),
]
RECORD_MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "AP", "P@5", "R@10", "RR", "Rprec", "Bpref", "infAP",
                   "NumRel", "NumRet", "NumRelRet", "Judged@10", "nDCG(unjudged=max)@5"]


def _measures() -> dict:
    out = {}
    for text in MEASURES:
        m = Measure.parse(text)
        out[text] = {"str": str(m), "repr": repr(m), "short": m.short,
                     "conventions": [m.convention(s) for s in SETTINGS] + [m.convention(one_query=True)],
                     "trec_eval": trec_eval_name(m), "aggregate": m.aggregate, "coverage": m.is_coverage}
    out["settings"] = [s.canonical() for s in SETTINGS] + [s.canonical(True) for s in SETTINGS]
    return out


def _names() -> dict:
    """The names other tools give: pytrec_eval's keys (judged.compat.pytrec_eval) and the
    measure words shell completion offers."""
    out = {}
    for family in sorted(pytrec_eval.supported_measures):
        for kw in ({}, {"relevance_level": 2}, {"judged_docs_only": True}):
            key = family + "".join(f" {k}={v}" for k, v in kw.items())
            out[key] = {name: str(m) for name, m in pytrec_eval.expand([family], **kw).items()}
    out["P.5,10 recall_3"] = {k: str(m) for k, m in pytrec_eval.expand(["P.5,10", "recall_3"]).items()}
    out["completion"] = [str(Measure.parse(w)) for w in measure_words()]
    return out


def _files(tmp: Path):
    c = make_collection(17, max_queries=12, max_docs=40)
    qrels = tmp / "qrels.txt"
    qrels.write_text(trec_qrels_text(c.qrels))
    runs = []
    for seed in (3, 5):
        r = make_collection(17 + seed, max_queries=12, max_docs=40).run
        path = tmp / f"run{seed}.txt"
        path.write_text(trec_run_text({**r, **c.run} if seed == 3 else r))
        runs.append(path)
    lines = (tmp / "run3.txt").read_text().splitlines(keepends=True)
    shuffled = tmp / "scattered.txt"  # not grouped by query: partitioned on disk (judged.core.spill)
    shuffled.write_text("".join(lines[::2] + lines[1::2]))
    runs.append(shuffled)
    return qrels, runs


def _stable(d):
    """Without what changes from one call to the next (time, tool version, file locations)."""
    if isinstance(d, dict):
        return {k: _stable(v) for k, v in d.items() if k not in ("created", "tool", "path")}
    if isinstance(d, list):
        return [_stable(v) for v in d]
    return d


def _renamed(text: str, names: dict) -> str:
    for path, name in names.items():
        text = text.replace(json.dumps(path)[1:-1], name)
    return text


def _records(tmp: Path) -> dict:
    qrels, runs = _files(tmp)
    out = {}
    for i, kw in enumerate([{}, {"complete": True}, {"ties": "input", "no_relevant": "skip"},
                            {"ignore_identical_ids": True, "depth_cut": 7}]):
        r = judged.evaluate(str(qrels), [str(p) for p in runs], RECORD_MEASURES, **kw)
        rec = _stable(record(r))
        rec["runs"] = {os.path.basename(k): v for k, v in rec["runs"].items()}
        out[f"record{i}"] = json.dumps(rec, indent=1, sort_keys=False)
        out[f"result{i}"] = json.dumps(_stable({**r.to_dict(per_query=True), "runs": {
            os.path.basename(k): v for k, v in r.to_dict(per_query=True)["runs"].items()}}), indent=1)
    m = Manifest.freeze(str(qrels), RECORD_MEASURES, corpus_id="golden", settings=Settings(no_relevant="skip"))
    out["manifest"] = json.dumps(_stable(m.to_dict()), indent=1)
    # every entry point that takes the conventions: a manifest with the others, a frozen
    # evaluation, a comparison and a holes report (their conventions and numbers)
    m = Manifest.freeze(str(qrels), RECORD_MEASURES[:4],
                        settings=Settings(ties="input", ignore_identical_ids=True, on_duplicate="max"))
    out["manifest1"] = json.dumps(_stable(m.to_dict()), indent=1)
    rec = _stable(record(evaluate_frozen(m, [str(p) for p in runs[:2]]), m))
    out["frozen"] = json.dumps({**rec, "runs": {os.path.basename(k): v for k, v in rec["runs"].items()}}, indent=1)
    names = {str(p): os.path.basename(p) for p in runs}
    c = judged.compare(str(qrels), [str(p) for p in runs], ["nDCG@10", "AP", "P@5"], no_relevant="skip",
                       ties="input", depth_cut=30, permutations=200)
    out["comparison"] = _renamed(json.dumps(_stable(c.to_dict()), indent=1, default=str), names)
    h = holes_report(str(qrels), [str(p) for p in runs], k=10, samples=20,
                     settings=Settings(complete=True, ties="rank", ignore_identical_ids=True))
    out["holes"] = _renamed(json.dumps(_stable(h.to_dict()), indent=1, default=str), names)
    return {k: v.replace(str(tmp), "<tmp>") for k, v in out.items()}


def _current(tmp: Path) -> dict:
    return {"measures": _measures(), "names": _names(), "records": _records(tmp)}


@pytest.mark.parametrize("path", ["compiled", "pure"])
def test_canonical_strings_and_values_are_byte_identical(tmp_path, path, monkeypatch):
    monkeypatch.setenv("JUDGED_SPILL_BYTES", "1")
    if path == "pure":
        ctx = judged.core.native.pure()
    else:
        if judged.core.native.compiled() is None:
            pytest.skip("the compiled back end is off")
        import contextlib

        ctx = contextlib.nullcontext()
    with ctx:
        current = _current(tmp_path)
    if os.environ.get("JUDGED_WRITE_GOLDEN") == "1" and path == "compiled":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert current["measures"] == golden["measures"]
    assert current["names"] == golden["names"]
    for key, text in golden["records"].items():
        assert current["records"][key] == text, key
