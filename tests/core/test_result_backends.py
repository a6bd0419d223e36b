"""Result.mean and Result.per_query as polars and Arrow (issue 33, item 4): the same rows and the
same float64 bits as the pandas tables, on the shipped example collection."""

from pathlib import Path

import numpy as np
import pytest

import judged
from judged.core.errors import UsageError

pl = pytest.importorskip("polars", reason="polars is in the test extras")
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
MEASURES = ["nDCG@10", "AP", "P@5", "NumRelRet", "GMAP", "Judged@10"]


@pytest.fixture(scope="module")
def result():
    return judged.evaluate(str(EXAMPLES / "qrels.txt"), {n: str(EXAMPLES / n) for n in ("bm25.run", "dense.run")},
                           MEASURES)


def test_per_query_in_polars_is_the_pandas_table_bit_for_bit(result):
    pd_table = result.per_query()
    pl_table = result.per_query(backend="polars")
    assert isinstance(pl_table, pl.DataFrame)
    assert pl_table.columns == ["run", "qid", "measure", "value"] == list(pd_table.columns)
    assert pl_table.height == len(pd_table) == 2 * 40 * len(MEASURES)
    for column in ("run", "qid", "measure"):
        assert pl_table[column].to_list() == pd_table[column].astype(str).tolist()
    assert pl_table.schema["value"] == pl.Float64
    # the same bits: float64 views compared as integers
    assert np.array_equal(pl_table["value"].to_numpy().view(np.int64), pd_table["value"].to_numpy().view(np.int64))


def test_mean_in_polars_has_the_runs_as_its_first_column(result):
    pd_mean = result.mean()
    pl_mean = result.mean(backend="polars")
    assert pl_mean.columns == ["run", *MEASURES]
    assert pl_mean["run"].to_list() == list(pd_mean.index) == ["bm25.run", "dense.run"]
    for m in MEASURES:
        assert np.array_equal(pl_mean[m].to_numpy().view(np.int64), pd_mean[m].to_numpy().view(np.int64)), m
    # the figures docs/comparing.md prints: nDCG@10 0.7311 (bm25) and 0.5145 (dense)
    assert pl_mean["nDCG@10"].round(4).to_list() == [0.7311, 0.5145]
    # NumRelRet is a sum, as trec_eval, in every backend
    assert pl_mean["NumRelRet"].to_list() == pd_mean["NumRelRet"].tolist()


def test_arrow_backend_and_a_bad_backend(result):
    t = result.per_query(backend="arrow")
    assert t.column_names == ["run", "qid", "measure", "value"] and t.num_rows == 2 * 40 * len(MEASURES)
    assert result.mean(backend="arrow").column("run").to_pylist() == ["bm25.run", "dense.run"]
    with pytest.raises(UsageError, match="backend must be one of pandas, polars, arrow, got 'numpy'"):
        result.mean(backend="numpy")


def test_an_empty_result_is_an_empty_polars_table():
    r = judged.evaluate({"q1": {"d1": 1}}, {"run": {"q1": {"d1": 1.0}}}, ["RR"])
    r.runs.clear()
    t = r.per_query(backend="polars")
    assert t.columns == ["run", "qid", "measure", "value"] and t.height == 0
