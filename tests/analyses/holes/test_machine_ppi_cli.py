"""The whole flow on the command line: a machine labels the pool, `judged pool` draws a
sample (pairs or queries), people's labels are merged, and holes, compare and infer print
prediction-powered estimates with --machine and --sample, apart from every judged number."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judged.analyses.pooling.poolfile import read_pool_file
from judged.analyses.holes.ppi import ppi_report


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """12 queries, two runs of 10, the people judged the top 3 of one run; the truth for the
    rest; a machine that is right 80% of the time."""
    d = tmp_path_factory.mktemp("ppi")
    rng = np.random.default_rng(7)
    truth, qrels, runs = {}, [], {"a": [], "b": []}
    for q in range(12):
        docs = [f"d{q}-{i}" for i in range(16)]
        for i, doc in enumerate(docs):
            truth[(f"q{q}", doc)] = int(rng.choice(3, p=[0.5, 0.3, 0.2] if i < 8 else [0.8, 0.15, 0.05]))
        for name, order in (("a", docs[:10]), ("b", docs[3:13])):
            runs[name] += [f"q{q} Q0 {doc} {r + 1} {10 - r} {name}\n" for r, doc in enumerate(order)]
        qrels += [f"q{q} 0 {doc} {truth[(f'q{q}', doc)]}\n" for doc in docs[:3]]
    (d / "qrels.txt").write_text("".join(qrels))
    for name, lines in runs.items():
        (d / f"{name}.run").write_text("".join(lines))
    machine = [f"{q} 0 {doc} {g if rng.random() < 0.8 else int(rng.integers(0, 3))}\n" for (q, doc), g in truth.items()]
    (d / "machine.txt").write_text("".join(machine))
    (d / "truth.txt").write_text("".join(f"{q} 0 {doc} {g}\n" for (q, doc), g in truth.items()))
    return d


def merged(campaign, pool_name) -> str:
    """The qrels plus the people's labels of the drawn pairs (the truth, as assessors would answer)."""
    truth = {(f[0], f[2]): int(f[3]) for f in map(str.split, (campaign / "truth.txt").read_text().splitlines())}
    pf = read_pool_file(campaign / pool_name)
    out = campaign / f"merged-{pool_name}.txt"
    out.write_text((campaign / "qrels.txt").read_text()
                   + "".join(f"{p.qid} 0 {p.docid} {truth[(p.qid, p.docid)]}\n" for p in pf.pairs))
    return out


def test_pair_sample_in_holes_compare_and_infer(campaign, cli):
    c = campaign
    assert cli("pool", c / "qrels.txt", c / "a.run", c / "b.run", "--depth", 10, "--strategy", "sample",
               "--budget", 60, "--seed", 2, "-o", c / "p.pool")[0] == 0
    qrels = merged(c, "p.pool")
    code, out, err = cli("holes", qrels, c / "a.run", c / "b.run", "--machine", c / "machine.txt",
                         "--sample", c / "p.pool", "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    ppi = d["ppi"]
    assert ppi["design"]["unit"] == "pair" and ppi["design"]["sampled_pairs"] == 60
    assert {e["measure"] for e in ppi["estimates"]} == {"P@10", "DCG@10"}  # nDCG@10 needs a query sample
    assert "not linear in the labels" in ppi["notes"][0]
    api = ppi_report(qrels, [c / "a.run", c / "b.run"], c / "machine.txt", c / "p.pool", ["P@10", "DCG@10"])
    assert ppi["estimates"][0]["estimates"]["ppi++"]["estimate"] == pytest.approx(
        api.rows[0].estimates["ppi++"].scalar()["estimate"])
    assert "Angelopoulos" in ppi["sources"] and "Horvitz-Thompson" in ppi["method"]
    assert "sample" in d  # holes-sample's estimates are still there, unchanged
    code, out, err = cli("compare", qrels, c / "a.run", c / "b.run", "-m", "nDCG@10", "--permutations", 100,
                         "--machine", c / "machine.txt", "--sample", c / "p.pool")
    assert code == 0, err
    assert "prediction-powered estimates" in out and "differences from the baseline" in out
    code, out, err = cli("infer", qrels, c / "a.run", c / "b.run", "--sample", c / "p.pool",
                         "--machine", c / "machine.txt", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["ppi"]["estimates"][0]["measure"] == "P@10"


def test_query_sample_estimates_ndcg_and_needs_the_machine(campaign, cli):
    c = campaign
    assert cli("pool", c / "qrels.txt", c / "a.run", c / "b.run", "--depth", 10, "--strategy",
               "sample-queries", "--queries", 6, "--seed", 1, "-o", c / "q.pool")[0] == 0
    qrels = merged(c, "q.pool")
    code, out, err = cli("holes", qrels, c / "a.run", c / "b.run", "--machine", c / "machine.txt",
                         "--sample", c / "q.pool", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["ppi"]["estimates"]
    assert [r["measure"] for r in rows] == ["nDCG@10", "nDCG@10"]
    for r in rows:
        e = r["estimates"]
        assert r["sampled"] == 6 and r["units"] == 12
        assert e["ppi"]["low"] <= e["ppi"]["estimate"] <= e["ppi"]["high"]
    code, out, err = cli("holes", qrels, c / "a.run", c / "b.run", "--sample", c / "q.pool")
    assert code == 2 and "--machine" in err
    code, out, err = cli("infer", qrels, c / "a.run", c / "b.run", "--sample", c / "q.pool")
    assert code == 2 and "whole queries" in err
    code, out, err = cli("infer", qrels, c / "a.run", c / "b.run", "--sample", c / "q.pool",
                         "--machine", c / "machine.txt")
    assert code == 0 and "nDCG@10" in out and "PPI++" in out


def test_an_unmerged_sample_is_refused(campaign, cli):
    c = campaign
    cli("pool", c / "qrels.txt", c / "a.run", c / "b.run", "--depth", 10, "--strategy", "sample",
        "--budget", 30, "--seed", 5, "-o", c / "u.pool")
    code, out, err = cli("holes", c / "qrels.txt", c / "a.run", "--machine", c / "machine.txt",
                         "--sample", c / "u.pool")
    assert code == 2 and "judge and merge the whole sample first" in err and err.count("\n") == 1


def test_holes_p_at_10_with_machine_and_pair_sample_adds_to_the_default_output(campaign, cli):
    """judged holes -m P@10 --machine --sample with a pair sample: P@10 has no sampled estimator
    (statAP and statNDCG estimate AP and nDCG@k), so the prediction-powered estimates stand for
    the sample (its human-only column is the sample alone) instead of an error. The output is the
    default one plus the machine-filled and prediction-powered parts, with the same judged and
    machine-filled numbers in both, and every estimate and end inside P's range [0, 1]."""
    c = campaign
    assert cli("pool", c / "qrels.txt", c / "a.run", c / "b.run", "--depth", 10, "--strategy", "sample",
               "--budget", 60, "--seed", 5, "-o", c / "p10.pool")[0] == 0
    qrels = merged(c, "p10.pool")
    runs = [c / "a.run", c / "b.run"]
    code, out, err = cli("holes", qrels, *runs, "-m", "P@10", "--format", "json")
    assert code == 0, err
    default = json.loads(out)
    code, out, err = cli("holes", qrels, *runs, "-m", "P@10", "--machine", c / "machine.txt",
                         "--sample", c / "p10.pool", "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert "sample" not in d and "no sampled estimator" in " ".join(d["ppi"]["notes"])
    assert {row["run"] for row in d["ppi"]["estimates"]} == set(d["runs"])
    for row in d["ppi"]["estimates"]:
        run = d["runs"][row["run"]]
        assert row["measure"] == "P@10" and row["judged"] == pytest.approx(run["score"])
        assert row["machine_filled"] == pytest.approx(run["machine_filled"]["mean"]["P@10 machine-filled"])
        for e in row["estimates"].values():
            assert 0 <= e["low"] <= e["estimate"] <= e["high"] <= 1
    plain = {k: v for k, v in d.items() if k not in ("ppi", "machine")}
    for r in plain["runs"].values():
        r.pop("machine_filled")
    assert plain == default
    code, out, err = cli("holes", qrels, *runs, "-m", "P@10", "--machine", c / "machine.txt",
                         "--sample", c / "p10.pool")
    assert code == 0 and "prediction-powered estimates" in out and "no sampled estimator" in out, err


def test_compare_p_at_10_with_machine_and_pair_sample_as_holes(campaign, cli):
    """judged compare -m P@10 --machine --sample (a pair sample) answers as judged holes does:
    no sampled estimator for P@10, so the prediction-powered estimates with the note saying so,
    and the difference from the baseline, instead of stopping at 'no sampled estimator'.
    Without --machine the sample alone still has nothing to estimate P@10 with: refused."""
    c = campaign
    assert cli("pool", c / "qrels.txt", c / "a.run", c / "b.run", "--depth", 10, "--strategy", "sample",
               "--budget", 60, "--seed", 5, "-o", c / "c10.pool")[0] == 0
    qrels = merged(c, "c10.pool")
    runs = [c / "a.run", c / "b.run"]
    code, out, err = cli("compare", qrels, *runs, "-m", "P@10", "--permutations", 100, "--machine",
                         c / "machine.txt", "--sample", c / "c10.pool", "--format", "json")
    assert code == 0, err
    d = json.loads(out)
    assert "sample" not in d and "no sampled estimator" in " ".join(d["ppi"]["notes"])
    assert [r["run"] for r in d["ppi"]["differences"]] == [f"{c / 'b.run'} - {c / 'a.run'}"]
    code, out, err = cli("compare", qrels, *runs, "-m", "P@10", "--permutations", 100,
                         "--sample", c / "c10.pool")
    assert code == 2 and "no sampled estimator for P@10" in err
