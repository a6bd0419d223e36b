import contextlib
import os
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


@pytest.fixture
def local_irds(tmp_path, monkeypatch):
    """register(qrels_text, docs=..., queries=...): an ir_datasets dataset of local files
    (TSV docs and queries, TREC qrels) registered under a fresh id, nothing downloaded."""
    ir_datasets = pytest.importorskip("ir_datasets")
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))

    def register(qrels: str, docs: str, queries: str, suffix: str = "") -> str:
        for name, text in (("docs.tsv", docs), ("queries.tsv", queries), ("qrels.txt", qrels)):
            (tmp_path / name).write_text(text)
        ds = ir_datasets.create_dataset(docs_tsv=str(tmp_path / "docs.tsv"), queries_tsv=str(tmp_path / "queries.tsv"),
                                        qrels_trec=str(tmp_path / "qrels.txt"))
        name = f"judged-test/{tmp_path.name}{suffix}"
        ir_datasets.registry.register(name, ds)
        return name

    return register


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


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli("eval", QRELS, RUN, ...)`` runs judged's command line in this process and gives
    (exit code, stdout, stderr), on a 200-column terminal (Rich wraps at 80 when not a terminal)."""
    from judged.cli import main

    monkeypatch.setenv("COLUMNS", "200")

    def run(*argv) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def screenshot():
    """``screenshot(HTML, PNG)`` opens a page in headless Chromium (Debian's) and saves a PNG."""
    return open_in_chromium


CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def browser_page():
    """``with browser_page(width, height) as page:`` a page of headless Chromium (Debian's)."""
    return chromium_page


@contextlib.contextmanager
def chromium_page(width: int = 1200, height: int = 1000):
    """A page of headless Debian Chromium driven by Playwright (never `playwright install`);
    without them the test skips, or fails under CI (.ci/run installs chromium)."""
    missing = pytest.fail if os.environ.get("CI") else pytest.skip
    try:
        from playwright import sync_api
    except ImportError:
        missing("the playwright package is not installed (pip install -e '.[test]')")
    if not os.path.exists(CHROMIUM):
        missing("Debian chromium is not installed (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--headless"])
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def open_in_chromium(html_path, png_path):
    """Open the page in headless Chromium; return (console errors, page errors, outside requests, svg count)."""
    errors, page_errors, outside = [], [], []
    with chromium_page() as page:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page_errors.append(str(e)))

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(f"file://{html_path}")
        page.wait_for_load_state("load")
        n_svg = page.locator("svg").count()
        main = page.locator("h2#summary + table")  # a report's main table, else the page's first table
        first_cell = (main if main.count() else page.locator("table")).first.inner_text()
        page.screenshot(path=str(png_path), full_page=False)
    return errors, page_errors, outside, n_svg, first_cell
