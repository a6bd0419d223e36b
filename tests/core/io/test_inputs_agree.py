"""Every in-memory input gives the file path's numbers, bit for bit, on both back ends.

The same generated collections (tied scores, negative grades, queries only in the run or
only in the qrels, docids whose string order is not their numeric order) are given to
``judged.evaluate`` as TREC files, as dicts {qid: {docid: value}}, as pandas and polars
DataFrames, as Arrow tables and as ranx ``Qrels`` / ``Run`` objects: the per-query values
of every measure must be the same float64 bits and the same queries. The in-memory forms
have their own fast paths (the compiled dict walker ``dict_pairs``, numba over ranx's
typed dicts, Arrow columns), each checked here against the file reader.
"""

import numpy as np
import pyarrow as pa
import pytest

import judged

from synth import make_collection, write_qrels, write_run

MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100", "Bpref", "ERR@10", "RBP", "Judged@10", "nDCG(unjudged=condensed)@10",
            "SetF", "IPrec(recall=0.2)", "NumRelRet", "infAP"]
SEEDS = range(6)


def _frame(d: dict, value: str):
    import pandas as pd

    rows = [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docid", value])


def _inputs(c, tmp_path):
    """name -> (qrels, run): the collection ``c`` in every form judged reads."""
    qrels_path, run_path = write_qrels(tmp_path / "qrels.txt", c.qrels), write_run(tmp_path / "run.txt", c.run)
    q_frame, r_frame = _frame(c.qrels, "grade"), _frame(c.run, "score")
    forms = {"file": (qrels_path, run_path), "dict": (c.qrels, c.run), "pandas": (q_frame, r_frame),
             "arrow": (pa.Table.from_pandas(q_frame), pa.Table.from_pandas(r_frame))}
    try:
        import polars as pl

        forms["polars"] = (pl.from_pandas(q_frame), pl.from_pandas(r_frame))
    except ImportError:
        pass
    return forms


def _values(result) -> tuple:
    (run,) = result.runs.values()
    return run.qids.tolist(), {m: v for m, v in run.values.items()}


def _assert_same(expected, got, label):
    qids, values = expected
    assert got[0] == qids, label
    for m, v in values.items():
        assert got[1][m].dtype == v.dtype and np.array_equal(got[1][m], v, equal_nan=True), (label, m)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_input_form_gives_the_files_bits(seed, tmp_path, backend):
    c = make_collection(seed, max_queries=12, max_docs=40)
    forms = _inputs(c, tmp_path)
    expected = _values(judged.evaluate(*forms.pop("file"), MEASURES))
    assert expected[0]  # the collection has evaluated queries
    for name, (qrels, run) in forms.items():
        _assert_same(expected, _values(judged.evaluate(qrels, run, MEASURES)), name)


def test_dicts_keyed_by_other_things_than_str_read_as_their_str(backend):
    """Integer query ids and docids, numpy numbers, a defaultdict: read as ``str()`` of the ids
    and ``float()`` of the values, as the file holding the same text reads."""
    from collections import defaultdict

    qrels = {1: {10: 2, "11": np.int64(1)}, "2": defaultdict(int, {"a": 1})}
    run = {1: {10: np.float32(0.5), 11: 1}, "2": {"a": np.float64(0.25), "b": True and 2}}
    as_text = judged.evaluate({"1": {"10": 2, "11": 1}, "2": {"a": 1}},
                              {"r": {"1": {"10": 0.5, "11": 1.0}, "2": {"a": 0.25, "b": 2.0}}}, MEASURES)
    _assert_same(_values(as_text), _values(judged.evaluate(qrels, {"r": run}, MEASURES)), "keys")


@pytest.mark.parametrize("bad, why", [
    ({"q": {"a": float("nan")}}, "score nan is not a finite number"),
    ({"q": {"a": True}}, "score True is not a finite number"),
    ({"q": {"a": "0.5"}}, "score '0.5' is not a finite number"),
    ({"q": [("a", 1.0)]}, "query 'q': expected a mapping docid -> score, found list"),
])
def test_a_bad_run_dict_is_named_as_before(bad, why, backend):
    with pytest.raises(judged.ParseError, match=why.replace("(", r"\(").replace(")", r"\)")):
        judged.read_run(bad)


@pytest.mark.parametrize("bad, why", [
    ({"q": {"a": 1.5}}, "grade 1.5 is not an integer"),
    ({"q": {"a": 2**63}}, "grade 9223372036854775808 is out of range"),
    ({"q": {}}, "no judgments"),
])
def test_a_bad_qrels_dict_is_named_as_before(bad, why, backend):
    with pytest.raises(judged.ParseError, match=why):
        judged.read_qrels(bad)


def test_ranx_objects_give_the_files_bits(tmp_path, backend):
    """ranx keeps its pairs in numba typed dicts (documents ranked by score, queries sorted):
    read in numba on the compiled path, through ``to_dict()`` on the pure one."""
    ranx = pytest.importorskip("ranx", reason="the ranx extra is not installed: pip install 'judged[ranx]'")
    for seed in (0, 3):
        c = make_collection(seed, max_queries=12, max_docs=40)
        path = tmp_path / str(seed)
        path.mkdir()
        expected = _values(judged.evaluate(write_qrels(path / "q.txt", c.qrels), write_run(path / "r.txt", c.run),
                                           MEASURES))
        got = judged.evaluate(ranx.Qrels(c.qrels), ranx.Run(c.run, name="r"), MEASURES)
        _assert_same(expected, _values(got), f"ranx {seed}")
