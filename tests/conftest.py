import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def example(tmp_path_factory):
    """The docs' example collection (qrels.txt, bm25.run, dense.run, tuned.run), written fresh."""
    out = tmp_path_factory.mktemp("example")
    runpy.run_path(str(ROOT / "docs" / "examples" / "make_example.py"))["main"](str(out))
    return out
