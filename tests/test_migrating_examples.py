"""Every python block of docs/migrating.md runs, in order, in one namespace: the guide's
side-by-side comparisons and each difference it claims are executed (and asserted) here."""

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "migrating.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = "# not run"  # a block that starts so shows another tool's code that the suite does not install


def blocks():
    return [b for b in BLOCK.findall(GUIDE.read_text(encoding="utf-8")) if not b.startswith(NOT_RUN)]


def test_the_guide_has_runnable_examples():
    assert len(blocks()) >= 10


def test_guide_examples_run_in_order(tmp_path, monkeypatch):
    pytest.importorskip("pytrec_eval")
    pytest.importorskip("ir_measures")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "migrating_md"}
    for i, code in enumerate(blocks(), start=1):
        try:
            exec(compile(code, f"{GUIDE.name}#block{i}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"docs/migrating.md python block {i} failed: {exc!r}\n{code}") from exc
