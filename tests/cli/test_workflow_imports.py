"""What the workflow commands after `judged eval` import (issue #19: each within 2x of eval's
time and memory on the same files): pyarrow.compute builds a wrapper per function when
imported (0.05 CPU-s, 9 MB resident), and pool, rejudge, meta holdout and meta stability
call none of them on TREC files (docids gathered by judged.core.data.take_strings); nor do
holes, compare and report, whose hole bounds read the docids of the runs' top k. compare loads
scipy.special's compiled functions without the package (0.25-0.4 CPU-s, 28 MB), and neither
the hole estimate's module nor numpy.ma."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import json, sys
from judged.cli import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""

COMMANDS = [  # V2: the qrels without every fifth judgment
    ["pool", "qrels.txt", "bm25.run", "dense.run", "--depth", "10", "-o", "-"],
    ["rejudge", "qrels.txt", "bm25.run", "dense.run", "--versus-qrels", "V2", "--format", "json"],
    ["rejudge", "qrels.txt", "bm25.run", "dense.run", "--versus-qrels", "V2"],
    ["meta", "holdout", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "--format", "json"],
    ["meta", "stability", "qrels.txt", "bm25.run", "dense.run", "-m", "nDCG@10", "--versus-qrels", "V2",
     "--format", "json"],
    ["meta", "holdout", "qrels.txt", "bm25.run", "dense.run", "tuned.run"],
    ["meta", "stability", "qrels.txt", "bm25.run", "dense.run", "-m", "nDCG@10", "--versus-qrels", "V2"],
    ["meta", "power", "qrels.txt", "bm25.run", "dense.run", "tuned.run"],
    ["meta", "pooling", "qrels.txt", "bm25.run", "dense.run", "tuned.run", "--budget", "20"],
    ["holes", "qrels.txt", "bm25.run", "dense.run", "--format", "json"],
    ["holes", "qrels.txt", "bm25.run", "dense.run"],
    ["compare", "qrels.txt", "bm25.run", "dense.run", "-m", "nDCG@10", "-m", "AP", "--format", "json"],
    ["report", "qrels.txt", "bm25.run", "dense.run"],
]


FILES = {"qrels.txt", "bm25.run", "dense.run", "tuned.run", "V2"}


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(a for a in argv if a not in FILES))
def test_workflow_command_imports_no_compute_module(argv, tmp_path):
    from judged.core.native import compiled

    if compiled() is None:
        pytest.skip("the pure path tokenizes with pyarrow.compute")
    examples = Path(__file__).resolve().parents[2] / "docs" / "examples"
    lines = (examples / "qrels.txt").read_text().splitlines(keepends=True)
    (tmp_path / "v2.txt").write_text("".join(line for i, line in enumerate(lines) if i % 5))
    argv = [str(tmp_path / "v2.txt") if a == "V2" else a for a in argv]
    # the environment as os.environ says, without COLUMNS: under pytest 9 on a pipe a child inherits
    # COLUMNS=80 that os.environ does not show, and a table wider than 80 columns is then Rich's to draw
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(argv)], capture_output=True, text=True,
                          cwd=examples, env=env)
    out, modules = done.stdout.rsplit("\nMODULES ", 1)
    assert done.returncode == 0 and out.strip(), done.stderr
    assert "pyarrow.compute" not in json.loads(modules)
    if argv[0] == "compare":  # scipy.special's compiled functions, not its package (judged.stats.special_functions);
        # nor the hole estimate's module (0.05 CPU-s) nor numpy.ma (np.unique's first call: 0.04 CPU-s)
        loaded = set(json.loads(modules))
        assert "scipy.special._ufuncs" in loaded and "scipy.special" not in loaded
        assert not {"judged.analyses.holes.estimate", "judged.analyses.holes.collection", "judged.analyses.holes.drawn_scores",
                    "judged.analyses.holes.grade_model", "numpy.ma"} & loaded
    if argv[0] == "holes":  # nor numpy.ma (np.unique's and np.median's first calls: 0.01 CPU-s)
        assert "numpy.ma" not in json.loads(modules)
    if argv[0] == "meta":  # tables printed without Rich off a terminal (0.03 CPU-s, judged.cli.plain); only
        # the meta-evaluation run imported, not every one the package names
        loaded = set(json.loads(modules))
        assert not {"rich", "judged.analyses.meta.agreement", "judged.analyses.meta.synthetic"} & loaded
    if argv[0] == "rejudge" or argv[:2] == ["meta", "stability"]:  # means over the common queries by a set's
        # lookups, not np.isin (which imports numpy.ma: 0.01-0.04 CPU-s)
        assert "numpy.ma" not in json.loads(modules)
    if argv[0] == "rejudge":  # its lines and table without Rich off a terminal ("…" is one cell to plain.py)
        assert "rich" not in json.loads(modules)
    if argv[0] == "report":  # the page's template read as a file: no importlib.resources (0.01 CPU-s)
        assert "importlib.resources" not in json.loads(modules)


def test_holes_on_a_pool_of_more_than_few_strings_imports_no_compute_module(tmp_path):
    """The estimate's pool of two runs' top 10 over 700 queries (14,000 rows, more than
    judged.core.data.FEW_STRINGS) gathers its docids run by run, and matches the runs'
    rows against them in place: no Arrow take, so no pyarrow.compute."""
    from judged.core.data import FEW_STRINGS
    from judged.core.native import compiled

    if compiled() is None:
        pytest.skip("the pure path tokenizes with pyarrow.compute")
    queries = 700
    assert 2 * 10 * queries > FEW_STRINGS >= 10 * queries
    for name, shift in (("a.run", 0), ("b.run", 3)):
        (tmp_path / name).write_text("".join(f"q{q} Q0 d{(d + shift) % 20} {d + 1} {20 - d} {name}\n"
                                             for q in range(queries) for d in range(12)))
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(queries) for d in range(0, 20, 2)))
    argv = ["holes", "qrels.txt", "a.run", "b.run"]
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(argv)], capture_output=True, text=True, cwd=tmp_path)
    out, modules = done.stdout.rsplit("\nMODULES ", 1)
    assert done.returncode == 0 and "estimate: " in out, done.stderr
    assert "pyarrow.compute" not in json.loads(modules)
