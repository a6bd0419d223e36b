"""Pools ordered by a machine judge (machine, disagreement) and the query sample
(sample-queries): what each pair was drawn with is in the file and reads back."""

from __future__ import annotations

import numpy as np
import pytest

from judged.cli import main
from judged.analyses.pooling.strategies import pool
from judged.analyses.pooling.poolfile import read_pool_file
from judged.analyses.holes.ppi import Design

# q1: the people judged a (2), b (0), c (0); holes x, y, z. q2: judged e (1); holes u, v.
QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 0\nq2 0 e 1\nq3 0 k 1\n"
RUN = ("q1 Q0 x 1 9 r\nq1 Q0 a 2 8 r\nq1 Q0 y 3 7 r\nq1 Q0 b 4 6 r\nq1 Q0 z 5 5 r\nq1 Q0 c 6 4 r\n"
       "q2 Q0 u 1 9 r\nq2 Q0 e 2 8 r\nq2 Q0 v 3 7 r\nq3 Q0 w 1 9 r\nq3 Q0 k 2 8 r\n")
# the machine: agrees on a (2) and e (1), calls b 1 (the people: 0) and c 0; labels the holes
MACHINE = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 e 1\nq1 0 x 0\nq1 0 y 2\nq1 0 z 1\nq2 0 u 0\nq3 0 w 1\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("qrels", QRELS), ("run", RUN), ("machine", MACHINE)):
        out[name] = tmp_path / f"{name}.txt"
        out[name].write_text(text)
    return out


def test_machine_strategy_judges_machine_relevant_first(files):
    p = pool(files["qrels"], [files["run"]], 10, strategy="machine", machine=files["machine"])
    # y (2) first, then z, w (1; z ranked 5, w ranked 1: w first), then v (unlabelled), then x, u (0, both at rank 1: by qid)
    assert [x.docid for x in p.pairs] == ["y", "w", "z", "v", "x", "u"]
    assert [x.fields["machine"] for x in p.pairs] == [2, 1, 1, None, 0, 0]
    assert all(x.strategy == "machine" and x.inclusion == 1.0 for x in p.pairs)


def test_disagreement_learns_where_the_machine_errs(files):
    # on the overlap: machine 2 -> people 2 (error 0); machine 1 -> people 1 and 0 (errors 0, 1);
    # machine 0 -> 0 (0); mean error 1/4; shrunk by 2 pseudo-labels at 1/4:
    # e0 = e2 = (0 + 0.5) / 3, e1 = (1 + 0.5) / 4
    p = pool(files["qrels"], [files["run"]], 10, strategy="disagreement", machine=files["machine"])
    first = [x.docid for x in p.pairs]
    assert first[:2] == ["w", "v"]  # e(1) = 0.375 at rank 1 (w); v unlabelled gets the largest e, at rank 3
    assert "e0=0.167,e1=0.375,e2=0.167" in p.label
    scores = [x.fields["disagreement"] for x in p.pairs]
    assert scores == sorted(scores, reverse=True)


def test_a_grade_never_wrong_on_a_small_overlap_is_not_certain(tmp_path):
    """Machine grade 0 right 20 times of 20, grade 3 right 3 times of 3: both errors would be
    0 and the two alike. Shrunk towards the mean error (2 of 25 labels wrong, by 1) by 2
    pseudo-labels, grade 3 is the less certain, so its pair comes first."""
    from judged.core.data import Qrels
    from judged.analyses.holes.machine import MachineLabels
    from judged.analyses.pooling.strategies import expected_error

    overlap = [(f"h{i}", 0, 0) for i in range(20)] + [(f"g{i}", 3, 3) for i in range(3)] + [("k0", 0, 1), ("k1", 0, 1)]
    human = Qrels(["q"] * 25, [d for d, _, _ in overlap], [h for _, h, _ in overlap])
    e = expected_error(human, MachineLabels(Qrels(["q"] * 25, [d for d, _, _ in overlap], [m for _, _, m in overlap])))
    mean = 2 / 25
    assert e == pytest.approx({0: 2 * mean / 22, 1: (2 + 2 * mean) / 4, 3: 2 * mean / 5})
    (tmp_path / "qrels.txt").write_text("".join(f"q 0 {d} {h}\n" for d, h, _ in overlap))
    (tmp_path / "machine.txt").write_text("".join(f"q 0 {d} {m}\n" for d, _, m in overlap) + "q 0 zero 0\nq 0 three 3\n")
    docs = ["zero", "three"] + [d for d, _, _ in overlap]
    (tmp_path / "run.txt").write_text("".join(f"q Q0 {d} {r} {100 - r} r\n" for r, d in enumerate(docs, 1)))
    p = pool(tmp_path / "qrels.txt", [tmp_path / "run.txt"], 10, strategy="disagreement",
             machine=tmp_path / "machine.txt")
    assert [x.docid for x in p.pairs] == ["three", "zero"]  # unshrunk: both 0, zero first by its rank


def test_machine_strategies_need_labels_and_cli_refuses_stray_options(files, capsys):
    with pytest.raises(Exception, match="--machine"):
        pool(files["qrels"], [files["run"]], 10, strategy="machine")
    code = main(["pool", str(files["qrels"]), str(files["run"]), "--depth", "10", "--machine", str(files["machine"]),
                 "-o", "-"])
    assert code == 2 and "--strategy machine or disagreement" in capsys.readouterr().err


def test_sample_queries_file_keeps_the_design(files, tmp_path, capsys):
    out = tmp_path / "q.pool"
    code = main(["pool", str(files["qrels"]), str(files["run"]), "--depth", "10", "--strategy", "sample-queries",
                 "--queries", "2", "--seed", "4", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    pf = read_pool_file(out)
    drawn = {x.qid for x in pf.pairs}
    assert len(drawn) == 2 and all(x.inclusion == pytest.approx(2 / 3) for x in pf.pairs)
    # every hole of a drawn query is in the pool; the others are the '#~' lines
    holes = {"q1": {"x", "y", "z"}, "q2": {"u", "v"}, "q3": {"w"}}
    assert {(x.qid, x.docid) for x in pf.pairs} == {(q, d) for q in drawn for d in holes[q]}
    d = Design.from_pool(out)
    assert d.unit == "query" and d.describe()["population_queries"] == 3 and d.describe()["sampled_queries"] == 2
    assert int(d.sampled.sum()) == len(pf.pairs) and len(d.qid) == 6
    assert "unit=query" in out.read_text()


def test_sample_queries_is_uniform_over_seeds(files):
    counts = {}
    for seed in range(600):
        p = pool(files["qrels"], [files["run"]], 10, strategy="sample-queries", queries=2, seed=seed)
        for q in {x.qid for x in p.pairs}:
            counts[q] = counts.get(q, 0) + 1
    # each of the 3 queries drawn with probability 2/3: 400 expected, sd 11.5
    assert set(counts) == {"q1", "q2", "q3"} and all(abs(c - 400) < 50 for c in counts.values())


def test_a_deterministic_pool_is_no_design(files, tmp_path):
    out = tmp_path / "d.pool"
    pool(files["qrels"], [files["run"]], 10).write(out)
    with pytest.raises(Exception, match="no sampling design"):
        Design.from_pool(out)


def test_stratified_pair_sample_reads_as_a_pair_design(files, tmp_path):
    out = tmp_path / "s.pool"
    pool(files["qrels"], [files["run"]], 10, strategy="sample", budget=4, seed=1).write(out)
    d = Design.from_pool(out)
    assert d.unit == "pair" and d.variance == "srs" and int(d.sampled.sum()) == 4 and len(d.qid) == 6
    assert np.all(d.strata[d.sampled] >= 1)
