"""The hashed-key helpers behind duplicate detection and qrels lookups agree with plain numpy."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from judged.core.data import KeyTable, any_repeated


@pytest.mark.parametrize("n", [0, 1, 2, 17, 5000])
def test_any_repeated_matches_unique(n):
    rng = np.random.default_rng(n)
    keys = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    assert any_repeated(keys) is False
    if n >= 2:
        keys[rng.integers(n)] = keys[rng.integers(n)] if n > 2 else keys[0]
        keys[-1] = keys[0]
        assert any_repeated(keys) is True
    # many keys in one bucket (equal top bits) are still told apart exactly
    near = np.arange(n, dtype=np.uint64)
    assert any_repeated(near) is False


def test_key_table_finds_present_and_absent_keys():
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**64 - 1, size=3000, dtype=np.uint64)
    keys = np.unique(keys)
    table = KeyTable.build(keys)
    probe = np.concatenate([keys[::3], rng.integers(0, 2**64 - 1, size=500, dtype=np.uint64), np.arange(50, dtype=np.uint64)])
    expected = np.array([np.flatnonzero(keys == k)[0] if (keys == k).any() else -1 for k in probe])
    assert (table.find(probe) == expected).all()


def test_qrels_index_rows_of_queries():
    from judged.core.data import Qrels

    index = Qrels(["a", "a", "b", "c", "c", "c"], ["x", "y", "x", "x", "y", "z"], [1, 0, 0, 0, 0, 1]).index
    assert index.rows_of(np.array([], dtype=np.int64)).tolist() == []
    assert index.rows_of(np.array([0, 2])).tolist() == [0, 1, 3, 4, 5]
    assert index.rows_of(np.array([1])).tolist() == [2]
    assert index.row_query.tolist() == [0, 0, 1, 2, 2, 2]
    assert index.has_relevant.tolist() == [True, False, True]


def test_arrow_numpy_helpers_match_pyarrow():
    import pyarrow as pa
    import pyarrow.compute as pc

    from judged.core.data import arrow_indices, arrow_strings, as_numpy

    ints = pa.array([5, None, 7, 8, 9], pa.int32()).slice(1)
    assert as_numpy(ints, null=-1).tolist() == [-1, 7, 8, 9]
    with pytest.raises(ValueError):
        as_numpy(ints)
    bools = pc.greater(pa.array(np.arange(20)), 9).slice(7, 9)
    assert as_numpy(bools).tolist() == bools.to_pylist()
    floats = pa.chunked_array([[0.5, 1.5], [2.5]])
    assert as_numpy(floats).tolist() == [0.5, 1.5, 2.5]
    assert as_numpy(pa.array([], pa.int64())).tolist() == []
    assert arrow_indices(np.array([3, 1])).to_pylist() == [3, 1]
    names = ["q1", "", "é", "long query id"]
    assert arrow_strings(names).to_pylist() == names
    assert arrow_strings([]).to_pylist() == []


def test_query_codes_confirm_hash_matches_on_the_strings(monkeypatch):
    # a hash that only sees the length: "zz" finds "bb"'s slot and must still be absent
    import judged.core.data as data

    monkeypatch.setattr(data, "string_hash", lambda values: np.asarray(pc.utf8_length(values), dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    qrels = data.Qrels(pa.array(["a", "bb", "ccc", "a"]), pa.array(["d1", "d2", "d3", "d4"]), np.array([1, 0, 2, 1]))
    index = qrels.index
    assert index._vocab_table is not None  # distinct lengths: no collision inside the vocabulary
    ids = pa.array(["a", "a", "zz", "ccc", "dddd", "bb", "zz"])
    assert index.query_codes(ids).tolist() == [0, 0, -1, 2, -1, 1, -1]
    colliding = data.Qrels(pa.array(["aa", "bb"]), pa.array(["d", "d"]), np.array([1, 1])).index
    assert colliding._vocab_table is None  # two ids, one hash: the exact path answers
    assert colliding.query_codes(pa.array(["bb", "cc", "aa"])).tolist() == [1, -1, 0]


@pytest.mark.parametrize("layout", ["sorted blocks", "unsorted blocks", "split query", "one query", "empty"])
def test_qrels_index_of_grouped_qrels_equals_the_sorted_build(layout, monkeypatch):
    """Qrels grouped by query are indexed by ordering their blocks; the index is the one
    sorting every row gives (a query in two blocks takes the sorting path)."""
    from judged.core.data import Qrels, QrelsIndex

    rng = np.random.default_rng(3)
    qids = {"sorted blocks": ["a", "b", "b2", "c", "é"], "unsorted blocks": ["q2", "q10", "q1", "é", "Z"],
            "split query": ["q1", "q2", "q1"], "one query": ["q"], "empty": []}[layout]
    rows = [(q, f"d{rng.integers(0, 40)}-{i}", int(rng.integers(-1, 4))) for q in qids for i in range(rng.integers(1, 6))]
    qrels = Qrels([r[0] for r in rows], [r[1] for r in rows], np.array([r[2] for r in rows], dtype=np.int64))
    grouped = QrelsIndex._build_grouped(qrels)
    assert (grouped is None) == (layout == "split query")
    fresh = Qrels(qrels.qid, qrels.docid, qrels.grade)
    monkeypatch.setattr(QrelsIndex, "_build_grouped", staticmethod(lambda q: None))
    expected = QrelsIndex.build(fresh)
    got = grouped or expected
    assert got.query_ids.tolist() == expected.query_ids.tolist() == sorted(set(qids))
    assert got.query_vocab.to_pylist() == expected.query_vocab.to_pylist()
    assert got.offsets.tolist() == expected.offsets.tolist()
    assert got.grade.tolist() == expected.grade.tolist()
    assert got.docid.to_pylist() == expected.docid.to_pylist()
    assert got.docid_hash.tolist() == expected.docid_hash.tolist()


def _strings(rng, n: int, alphabet=("q", "1", "2", "Z", "é", "ü", "_", "0")) -> list[str]:
    return ["".join(rng.choice(alphabet, size=rng.integers(0, 6))) for _ in range(n)]


@pytest.mark.parametrize("n", [0, 1, 2, 7, 300])
def test_string_takes_and_byte_order_give_arrows_answers(n):
    """The numpy string helpers eval's reading uses (so that it never imports
    pyarrow.compute) give Arrow's take and sort_indices, on sliced arrays too."""
    from judged.core.data import byte_order, take_runs, take_strings

    rng = np.random.default_rng(n)
    values = pa.array(["pad", *_strings(rng, n), "tail"], pa.string()).slice(1, n)
    rows = rng.integers(0, max(n, 1), size=2 * n) if n else np.zeros(0, np.int64)
    assert take_strings(values, rows).to_pylist() == values.take(pa.array(rows, pa.int64())).to_pylist()
    starts = rng.integers(0, max(n, 1), size=n // 2) if n else np.zeros(0, np.int64)
    lengths = rng.integers(0, n - starts + 1) if n else np.zeros(0, np.int64)
    expected = [values[int(s) + i].as_py() for s, k in zip(starts, lengths) for i in range(k)]
    assert take_runs(values, starts, lengths).to_pylist() == expected
    order, increasing = byte_order(values)
    assert order.tolist() == pc.sort_indices(values).to_pylist()
    assert increasing == (len(set(values.to_pylist())) == n)


def test_byte_order_of_many_ids_and_of_ids_holding_nul_is_arrows():
    from judged.core import data

    rng = np.random.default_rng(5)
    many = pa.array(_strings(rng, data.FEW_STRINGS + 5), pa.string())
    for values in (many, pa.array(["b\x00", "b", "a\x00b", "a"], pa.string())):
        order, increasing = data.byte_order(values)
        assert order.tolist() == pc.sort_indices(values).to_pylist()
        assert increasing == (len(set(values.to_pylist())) == len(values))
    starts = np.arange(0, len(many), 2)
    assert data.take_runs(many, starts, np.ones(len(starts), np.int64)).to_pylist() == many.to_pylist()[::2]  # Arrow take


def test_a_runs_docids_only_keep_what_aligned_rows_read():
    """Run.docids_only(): the docids, their hashes and the qid blocks (a refusal's message
    names the run's first queries), without the qid, score and rank columns; the run itself
    is left whole."""
    from judged.core.data import Run

    run = Run(pa.array(["q1", "q1", "q2"]), pa.array(["a", "b", "a"]), np.array([3.0, 2.0, 1.0]))
    slim = run.docids_only()
    assert slim.qid is None and slim.score is None and slim.rank is None and slim.rank_text is None
    assert slim.docid.equals(run.docid) and np.array_equal(slim.docid_hash, run.docid_hash) and len(slim) == 3
    assert slim.qid_blocks[1].to_pylist() == ["q1", "q2"] and run.score.tolist() == [3.0, 2.0, 1.0]


@pytest.mark.parametrize("cut", [[], [0], [3], [3, 3], [1, 4, 6], [7]])
def test_stacked_runs_know_their_blocks_and_hashes(cut):
    # runs stacked: the rows one after another, the docid hashes and the qid blocks as computed
    # on the stacked columns, a block going on from one part into the next included
    from judged.core.data import Run, id_blocks, stack_runs, string_hash

    qid = ["q1", "q1", "q2", "q2", "q2", "q10", "q3"]
    whole = Run(qid, [f"d{i}" for i in range(7)], np.arange(7.0), rank=np.arange(1.0, 8.0))
    bounds = [0, *cut, 7]
    parts = [Run(qid[a:b], [f"d{i}" for i in range(a, b)], np.arange(a, b, dtype=float), rank=np.arange(a + 1.0, b + 1))
             for a, b in zip(bounds, bounds[1:])]
    for p in parts:
        p.docid_hash, p.qid_blocks  # computed on each part
    run = stack_runs(parts, name="r", source="r.txt")
    assert run.name == "r" and run.qid.to_pylist() == qid and run.docid.to_pylist() == whole.docid.to_pylist()
    assert run.score.tolist() == whole.score.tolist() and run.rank.tolist() == whole.rank.tolist()
    assert run.__dict__["docid_hash"].tolist() == string_hash(whole.docid).tolist()
    starts, ids = run.__dict__["qid_blocks"]
    expected = id_blocks(whole.qid)
    assert starts.tolist() == expected[0].tolist() and ids.to_pylist() == expected[1].to_pylist()
    assert "qid_blocks" not in stack_runs([Run(["q1"], ["d"], [1.0])] + parts).__dict__  # a part not knowing them


# string_hash("jng3ot6E") + _MQ == string_hash("doc-vc8j") (mod 2^64): the judgment keys of ("q1",
# "doc-vc8j") and ("q2", "jng3ot6E") are equal (pair_keys: docid hash + query code x _MQ), found by
# inverting string_hash's steps for 8-byte ids
COLLIDING = ("doc-vc8j", "jng3ot6E")


def test_grades_after_a_judgment_key_collision(backend, monkeypatch):
    """Two judgments of different queries whose hashed (query, docid) keys are equal: the
    index has no hash table (``QrelsIndex.table`` is None) and looks grades up by exact
    (query, docid) codes (``_lookup_exact``, reached by evaluate on the pure back end; the
    compiled one confirms every hash match on the bytes). Every grade comes out as with
    ids that do not collide."""
    import judged
    from judged.core.data import QrelsIndex, _MQ, pair_keys, string_hash
    from judged.core.io import read_qrels

    a, b = COLLIDING
    ha, hb = string_hash(pa.array([a, b]))
    assert pair_keys(np.array([0, 1]), np.array([ha, hb], dtype=np.uint64)).tolist() == [int(ha)] * 2
    qrels = {"q1": {a: 2, "x": 0, "y": 1}, "q2": {b: 1, "z": 0, "w": 3}}
    run = {"q1": {b: 4.0, a: 3.0, "x": 2.0, "e": 1.0}, "q2": {a: 4.0, "z": 3.0, b: 2.0, "w": 1.0}}
    assert QrelsIndex.build(read_qrels(qrels)).table is None
    exact = []
    lookup_exact = QrelsIndex._lookup_exact
    monkeypatch.setattr(QrelsIndex, "_lookup_exact", lambda self, *args: exact.append(1) or lookup_exact(self, *args))
    measures = ["AP", "Judged@4", "nDCG@10"]
    got = judged.evaluate(qrels, run, measures).per_query()
    assert bool(exact) == (backend == "pure")

    def renamed(d):
        return {q: {{a: "PX", b: "PY"}.get(doc, doc): v for doc, v in docs.items()} for q, docs in d.items()}

    assert got.values.tolist() == judged.evaluate(renamed(qrels), renamed(run), measures).per_query().values.tolist()
    value = {(q, m): v for q, m, v in zip(got.qid, got.measure, got.value)}
    # q1 ranks b (not judged for q1), a (2), x (0), e; q2 ranks a (not judged for q2), z (0), b (1), w (3)
    assert (value["q1", "AP"], value["q1", "Judged@4"]) == (0.25, 0.5)  # a at 2 of R=2: (1/2) / 2
    assert (value["q2", "AP"], value["q2", "Judged@4"]) == (pytest.approx((1 / 3 + 2 / 4) / 2), 0.75)
