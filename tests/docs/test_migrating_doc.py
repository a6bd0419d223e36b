"""Every python block of docs/migrating.md runs, in order, in one namespace: the guide's
side-by-side comparisons and each difference it claims are executed (and asserted) here.

Blocks that start with ``# needs: PACKAGE`` (the "Inside other tools" sections) run in a
test of their own, after the guide's first block (the shared collection), and skip, naming
the package, where it is not installed."""

import importlib.util
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = "# not run"  # a block that starts so shows another tool's code that the suite does not install
NEEDS = re.compile(r"^# needs: ([\w, ]+)\n")


def all_blocks():
    return [b for b in BLOCK.findall(GUIDE.read_text(encoding="utf-8")) if not b.startswith(NOT_RUN)]


def blocks():
    return [b for b in all_blocks() if not NEEDS.match(b)]


def needing():
    """Package -> the blocks that need it, in the guide's order."""
    out = {}
    for b in all_blocks():
        m = NEEDS.match(b)
        if m:
            out.setdefault(m.group(1).strip(), []).append(b)
    return out


def run_blocks(codes, namespace, label):
    for i, code in enumerate(codes, start=1):
        try:
            exec(compile(code, f"{GUIDE.name}#{label}{i}", "exec"), namespace)
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"docs/migrating.md {label} block {i} failed: {exc!r}\n{code}") from exc


def test_the_guide_has_runnable_examples():
    assert len(blocks()) >= 10
    assert set(needing()) == {"sentence_transformers", "mteb", "pyterrier", "ranx", "datasets", "mlflow"}


def test_guide_examples_run_in_order(tmp_path, monkeypatch):
    pytest.importorskip("pytrec_eval")
    pytest.importorskip("ir_measures")
    monkeypatch.chdir(tmp_path)
    run_blocks(blocks(), {"__name__": "migrating_md"}, "block")


@pytest.mark.parametrize("package", sorted(needing()))
def test_inside_other_tools_examples_run(package, tmp_path, monkeypatch):
    for name in package.split(","):
        if importlib.util.find_spec(name.strip()) is None:
            pytest.skip(f"{name.strip()} is not installed (pip install 'judged[integrations]')")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    namespace = {"__name__": "migrating_md"}
    run_blocks(blocks()[:1], namespace, "block")          # the shared qrels and run
    run_blocks(needing()[package], namespace, package + "-block")
