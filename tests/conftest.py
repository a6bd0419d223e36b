import runpy
from pathlib import Path

import pytest

import judged.core.native

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def example(tmp_path_factory):
    """The docs' example collection (qrels.txt, bm25.run, dense.run, tuned.run), written fresh."""
    out = tmp_path_factory.mktemp("example")
    runpy.run_path(str(ROOT / "docs" / "examples" / "make_example.py"))["main"](str(out))
    return out


@pytest.fixture(params=["compiled", "pure"])
def backend(request):
    """The test runs once on each of judged's back ends: the compiled extension (skipped when
    it is not built or JUDGED_PURE_PYTHON=1 turns it off) and the pure Python/numpy path
    (``judged.core.native.pure()``, judged's one switch)."""
    if request.param == "compiled":
        if judged.core.native.compiled() is None:
            pytest.skip(f"the compiled back end is {judged.core.native.status()[1]}")
        yield "compiled"
    else:
        with judged.core.native.pure():
            yield "pure"
