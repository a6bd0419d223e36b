"""ranx objects in and out (judged.core.io.ranx_objects, judged.integrations.ranx), against the real ranx."""

import sys

import pytest

import judged

ranx = pytest.importorskip("ranx", reason="the ranx extra is not installed: pip install 'judged[ranx]'")

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}, "q3": {"d5": 1}}
RUN = {"q1": {"d1": 0.75, "d3": 0.75, "d2": 0.5, "x": 0.25}, "q2": {"d8": 1.0, "d4": 0.5}, "q3": {"d5": 1.0}}


@pytest.fixture(scope="module")
def objects():
    """Built once: ranx compiles its numba kernels on first use (about a minute cold)."""
    return ranx.Qrels(QRELS), ranx.Run(RUN, name="bm25")


def test_ranx_objects_are_inputs_as_they_are(objects):
    rq, rr = objects
    ours = judged.evaluate(rq, rr, ["nDCG@10", "AP", "RR", "nDCG(gain=exp)@10"], ties="input")
    assert list(ours.runs) == ["bm25"]                     # the ranx Run's name
    theirs = ranx.evaluate(rq, rr, ["ndcg@10", "map", "mrr", "ndcg_burges@10"])
    for ours_name, theirs_name in [("nDCG@10", "ndcg@10"), ("AP", "map"), ("RR", "mrr"),
                                   ("nDCG(gain=exp)@10", "ndcg_burges@10")]:
        assert ours.mean().loc["bm25", ours_name] == pytest.approx(theirs[theirs_name], abs=1e-12)
    assert judged.read_qrels(rq).source == "<ranx.Qrels>" and len(judged.read_run(rr)) == 7


def test_reading_ranx_objects_does_not_import_ranx_itself():
    import judged.core.io.ranx_objects as reader

    class Qrels:  # same name, other module: not a ranx object
        pass

    assert not reader.is_qrels(Qrels()) and "numba" not in reader.__dict__


def test_export_round_trips(objects, tmp_path):
    from judged.integrations.ranx import to_qrels, to_run

    q, r = to_qrels(QRELS), to_run(RUN, name="dense")
    assert isinstance(q, ranx.Qrels) and isinstance(r, ranx.Run) and r.name == "dense"
    assert q.to_dict() == QRELS and r.to_dict() == RUN
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.25 tag\n")
    assert to_run(path).to_dict() == {"q1": {"d1": 0.5, "d2": 0.25}}
    assert to_run(path).name == str(path)


def test_importing_judged_imports_no_integration_package():
    import subprocess

    code = ("import judged, judged.core.io, judged.core.evaluation, sys; "
            "heavy = {'torch', 'sentence_transformers', 'mteb', 'pyterrier', 'ranx', 'numba', 'datasets', "
            "'ir_measures'}; print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
