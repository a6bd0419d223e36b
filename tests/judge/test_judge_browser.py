"""The page in a real browser (Playwright driving Debian's Chromium, never a downloaded
one): log in, judge three documents by keyboard, evidence refused when missing, undo,
export; a document containing <script> does not run it. Screenshots go to
$JUDGED_SCREENSHOT_DIR (``docs/img`` regenerates the ones in docs/judging.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
from judge_helpers import EXAMPLE

from judged.cli import main

CHROMIUM = "/usr/bin/chromium"
# headless, no sandbox (root in CI), and nothing fetched in the background: the tests reach
# only loopback addresses
BROWSER_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-domain-reliability", "--no-first-run", "--metrics-recording-only",
                "--disable-features=OptimizationHints,MediaRouter,Translate"]
sync_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no {CHROMIUM}: apt-get install -y chromium", allow_module_level=True)


def cli_token(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


@pytest.fixture
def shots(tmp_path) -> Path:
    d = Path(os.environ.get("JUDGED_SCREENSHOT_DIR") or tmp_path / "img")
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_judge_by_keyboard_undo_export_and_no_script(tmp_path, capsys, serve, shots):
    db = str(tmp_path / "judging.db")
    assert main(["judge", "init", "--db", db, "--pool", str(EXAMPLE / "pool.txt"), "--queries", str(EXAMPLE / "queries.tsv"),
                 "--corpus", str(EXAMPLE / "corpus.jsonl"), "--scale", str(EXAMPLE / "scale.toml"),
                 "--overlap", "0.5", "--name", "covid example"]) == 0
    alice = cli_token(capsys, "judge", "add-assessor", "alice", "--db", db)
    bob = cli_token(capsys, "judge", "add-assessor", "bob", "--db", db)
    boss = cli_token(capsys, "judge", "add-assessor", "boss", "--admin", "--db", db)
    server = serve(db)

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        ctx = browser.new_context(viewport={"width": 1200, "height": 820}, accept_downloads=True)
        ctx.set_default_timeout(120_000)  # a 2-core machine under load can stall Chromium for a while
        page = ctx.new_page()
        page_errors, dialogs = [], []
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

        # log in: a wrong token is refused, the right one opens the judging page
        page.goto(server.url + "/")
        page.fill("#token", "not-a-token")
        page.click("#login-button")
        assert "not valid" in page.text_content("#login-error")
        page.fill("#token", alice)
        page.screenshot(path=str(shots / "judge-login.png"))
        page.click("#login-button")
        expect, title_el, msg = sync_api.expect, page.locator("#doc-title"), page.locator("#message")
        expect(page.locator("#query")).to_have_text(re.compile(".+"))
        shown = []

        # (the page's CSP forbids eval, so waits use locators, not wait_for_function)
        def current():
            expect(title_el).to_have_text(re.compile(".+"))
            return title_el.text_content()

        def wait_saved(text):
            expect(msg).to_contain_text(text)

        def wait_moved_on(title):
            for _ in range(400):
                if page.is_visible("#done") or (title_el.text_content() or "") not in ("", title):
                    return
                page.wait_for_timeout(25)
            raise AssertionError(f"the page stayed on {title!r}")

        def check_inert():
            # whatever the document holds, it is text: no script ran, no element was created from it
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.locator("#pair-view script, #pair-view img").count() == 0
            if "<script>" in (title_el.text_content() or ""):
                assert "<script>window.__pwned = 2</script>" in page.text_content("#doc-text")  # shown as text
                page.screenshot(path=str(shots / "judge-script-inert.png"))

        def grade_with_note(key, note, saved):
            page.keyboard.press("e")
            page.keyboard.type(note)
            page.keyboard.press("Escape")
            page.keyboard.press(key)
            wait_saved(saved)

        def next_document(previous=None):
            if previous is not None:
                wait_moved_on(previous)
            title = current()
            shown.append(title)
            check_inert()
            return title

        # 1st document: grade 2 without evidence is refused, then given with a typed note
        first = next_document()
        page.keyboard.press("2")
        wait_saved("Evidence required")
        assert "error" in msg.get_attribute("class")
        page.screenshot(path=str(shots / "judge-evidence-refused.png"))
        assert page.text_content("#doc-title") == first                     # nothing moved on ...
        assert httpx.get(server.url + "/api/progress", headers={"Authorization": f"Bearer {alice}"}).json()["graded"] == 0
        grade_with_note("2", "Reports the outcome the query asks about.", "Saved grade 2")

        # 2nd document: grade 0 needs no evidence
        second = next_document(first)
        page.keyboard.press("0")
        wait_saved("Saved grade 0")

        # 3rd document: quote a selected passage (q), grade 3
        third = next_document(second)
        page.evaluate("""() => { const n = document.getElementById('doc-text').firstChild;
            const r = document.createRange(); r.setStart(n, 0); r.setEnd(n, Math.min(40, n.length));
            const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); }""")
        page.keyboard.press("q")
        assert page.input_value("#evidence").startswith("“")
        page.screenshot(path=str(shots / "judge-page.png"))
        page.keyboard.press("3")
        wait_saved("Saved grade 3")

        # undo: the third document comes back; judged again it is revision 2
        wait_moved_on(third)
        page.keyboard.press("u")
        wait_saved("Undone")
        expect(title_el).to_have_text(third)
        page.screenshot(path=str(shots / "judge-undo.png"))
        grade_with_note("1", "On second reading: background only.", "revision 2")

        # the rest by keyboard too (grade 0), so every document, <script> one included, is shown
        wait_moved_on(third)
        while not page.is_visible("#done"):
            assert (title_el.text_content() or "") not in shown
            title = next_document()
            page.keyboard.press("0")
            wait_moved_on(title)
        assert len(shown) == 6 and any("<script>" in t for t in shown)
        check_inert()
        assert not dialogs and not page_errors

        # bob judges his overlap share through the API, all 3 (alice gave none): disagreements
        hb = {"Authorization": f"Bearer {bob}"}
        n = 0
        while (r := httpx.get(server.url + "/api/next", headers=hb)).status_code == 200:
            p = r.json()
            assert httpx.post(server.url + "/api/judgments", headers=hb, json={
                "qid": p["qid"], "docid": p["docid"], "grade": 3, "evidence": "bob's note",
                "request_id": f"b{n}"}).status_code == 201
            n += 1
        assert n == 3

        # the admin page: agreement, disagreements, export
        admin_ctx = browser.new_context(viewport={"width": 1200, "height": 1000}, accept_downloads=True)
        admin_ctx.set_default_timeout(120_000)
        admin = admin_ctx.new_page()
        admin.goto(server.url + "/")
        admin.fill("#token", boss)
        admin.click("#login-button")
        admin.wait_for_selector("#agreement")
        assert "Cohen" in admin.text_content("#agreement")
        admin.screenshot(path=str(shots / "judge-admin.png"), full_page=True)
        # adjudicate the first disagreement on the page: it is then exported with that grade
        rows = admin.locator("#disagreements form.adjudicate")
        before = rows.count()
        assert before == 3
        form = rows.first
        qid, docid = form.get_attribute("data-qid"), form.get_attribute("data-docid")
        form.locator("select").select_option("1")
        form.locator("input[name=evidence]").fill("background, per the scale's definition")
        form.locator("button").click()
        expect(admin.locator("#disagreements tr", has_text=docid).locator("td").nth(3)).to_have_text("1")
        with admin.expect_download() as dl:
            admin.click("#export-link")
        qrels = Path(dl.value.path()).read_text()
        browser.close()

    lines = [line.split() for line in qrels.splitlines()]
    assert all(len(f) == 4 and f[1] == "0" for f in lines)
    api = httpx.get(server.url + "/api/export", headers={"Authorization": f"Bearer {boss}"}).text
    assert qrels == api and len(lines) == 4                                 # 3 single + 1 adjudicated
    assert [qid, "0", docid, "1"] in lines                                  # the adjudicated grade
    # the undone-and-revised document is exported with its revised grade (or left out if bob disagreed)
    hist = httpx.get(server.url + "/api/history", headers={"Authorization": f"Bearer {alice}"},
                     params={"qid": "q1" if third in _titles("q1") else "q2", "docid": _docid(third)}).json()
    assert [(h["kind"], h["grade"]) for h in hist] == [("grade", 3), ("undo", None), ("grade", 1)]


def _corpus():
    import json
    return [json.loads(line) for line in (EXAMPLE / "corpus.jsonl").read_text().splitlines()]


def _docid(title: str) -> str:
    return next(d["_id"] for d in _corpus() if d["title"] == title)


def _titles(qid: str) -> set[str]:
    pool = [line.split() for line in (EXAMPLE / "pool.txt").read_text().splitlines() if not line.startswith("#")]
    ids = {d for q, d, *_ in pool if q == qid}
    return {d["title"] for d in _corpus() if d["_id"] in ids}


def test_a_page_on_another_port_cannot_log_the_assessor_in_as_someone_else(tmp_path, capsys, serve):
    """Issue #14's attack in a real browser: alice is logged in; a page on the same host but
    another port sets the log-in cookie (cookies ignore ports) and posts bob's token with the
    matching field. The origin check refuses it: alice stays alice, no session for bob."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from judge_helpers import free_port

    db = str(tmp_path / "judging.db")
    assert main(["judge", "init", "--db", db, "--pool", str(EXAMPLE / "pool.txt"), "--queries", str(EXAMPLE / "queries.tsv"),
                 "--corpus", str(EXAMPLE / "corpus.jsonl")]) == 0
    alice = cli_token(capsys, "judge", "add-assessor", "alice", "--db", db)
    bob = cli_token(capsys, "judge", "add-assessor", "bob", "--db", db)
    server = serve(db)
    evil = f"""<!doctype html><body><form id=f method=post action="{server.url}/login">
      <input name=token value="{bob}"><input name=csrf value="{'t' * 43}"></form>
      <script>document.cookie = "judged_login={'t' * 43}; path=/"; document.getElementById("f").submit();</script>"""

    class Evil(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(evil.encode())

        def log_message(self, *a):
            pass

    attacker = ThreadingHTTPServer(("127.0.0.1", free_port()), Evil)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
            page = browser.new_page()
            page.set_default_timeout(120_000)
            page.goto(server.url + "/")
            page.fill("#token", alice)
            page.click("#login-button")
            page.wait_for_selector("#judge")
            response = page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
            page.wait_for_load_state()
            assert page.url.startswith(server.url)            # the form was posted ...
            assert "refused" in page.content()                # ... and refused (403)
            page.goto(server.url + "/")
            assert page.text_content(".who").startswith("alice")
            browser.close()
    finally:
        attacker.shutdown()
    assert response is not None
