"""The judging app in a real browser (Playwright driving Debian's Chromium, never a
downloaded one), issue #20's acceptance: an assessor logs in, does the practice round, reads
their agreement, then judges by keyboard only (a quoted passage picked by sentence, a
comment, a flag, evidence refused when missing, undo); an admin reassigns an assessor's
remaining pairs and adjudicates a disagreement, whose history is kept and exported. axe-core
(npm's axe-core, which .ci/run installs) checks the login, judging, practice, done, admin
and guidelines pages: no serious or critical violation. Layout on a laptop and a phone,
bidi isolation, keyboard reach. Screenshots go to $JUDGED_SCREENSHOT_DIR (``docs/img``
regenerates the ones in docs/judging.md)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest
from judge_helpers import BROWSER_ARGS, CHROMIUM, EXAMPLE, make_campaign

from judged.cli import main

AXE_PATHS = [os.environ.get("JUDGED_AXE_JS", ""),
             str(Path(__file__).resolve().parents[2] / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js")]
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


def axe_source() -> str:
    for p in AXE_PATHS:
        if p and os.path.exists(p):
            return Path(p).read_text("utf-8")
    if os.environ.get("CI"):
        raise AssertionError("axe-core is missing: .ci/run installs it with npm into .ci/node")
    pytest.skip("axe-core not installed: npm install --prefix .ci/node axe-core@4")


AXE_RESULTS: dict[str, list] = {}


def axe_check(page, name: str, source: str) -> list:
    """Run axe-core (WCAG 2.0/2.1 A and AA rules and best practices) on the page as it is;
    the serious and critical violations (expected: none)."""
    page.evaluate(source)                        # evaluated by the debugger: the page's CSP does not apply
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}});
        return {passes: r.passes.length, violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                       targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))};
    }""")
    assert found["passes"] > 10                  # axe ran its rules on this page
    found = found["violations"]
    AXE_RESULTS[name] = found
    print(f"axe {name}: {len(found)} violations, "
          f"{sum(v['impact'] in ('serious', 'critical') for v in found)} serious or critical "
          + json.dumps([(v["id"], v["impact"]) for v in found]))
    return [v for v in found if v["impact"] in ("serious", "critical")]


def keyboard_reach(page, presses: int = 60) -> set[str]:
    """Ids (or text) of the elements Tab reaches, in presses."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    seen = set()
    for _ in range(presses):
        page.keyboard.press("Tab")
        seen.add(page.evaluate("() => { const e = document.activeElement; return e ? (e.id || e.name || e.textContent.trim().slice(0, 30)) : ''; }"))
    return seen


def visible_controls(page, scope: str) -> set[str]:
    return set(page.evaluate("""(scope) => Array.from(document.querySelectorAll(scope + ' button, ' + scope + ' a[href], '
        + scope + ' textarea, ' + scope + ' select, ' + scope + ' input:not([type=hidden]), ' + scope + ' summary'))
        .filter(e => e.checkVisibility())
        .map(e => e.id || e.name || e.textContent.trim().slice(0, 30))""", scope))


def answers() -> dict[str, int]:
    return {f[2]: int(f[3]) for f in (line.split() for line in (EXAMPLE / "practice.qrels").read_text().splitlines())}


def _corpus() -> dict[str, dict]:
    return {d["_id"]: d for d in map(json.loads, (EXAMPLE / "corpus.jsonl").read_text().splitlines())}


def by_title(title: str) -> str:
    return next(d for d, x in _corpus().items() if x["title"] == title)


def api_practice(url: str, token: str, grades: dict[str, int] | None = None) -> None:
    """An assessor's practice round through the API (the known answers, unless told), then start."""
    h = {"Authorization": f"Bearer {token}"}
    key = answers() | (grades or {})
    n = 0
    while (r := httpx.get(url + "/api/next", headers=h)).status_code == 200:
        p = r.json()
        assert p.get("practice")
        assert httpx.post(url + "/api/judgments", headers=h, json={
            "qid": p["qid"], "docid": p["docid"], "grade": key[p["docid"]], "evidence": "practice",
            "request_id": f"practice-{n}"}).status_code == 201
        n += 1
    assert r.status_code == 409 and r.json()["practice"]["graded"] == 3
    assert httpx.post(url + "/api/practice/start", headers=h).status_code == 200


def test_a_campaign_walkthrough_by_keyboard_with_practice_reassign_adjudication(tmp_path, capsys, serve, shots):
    axe = axe_source()
    db = str(tmp_path / "judging.db")
    E = EXAMPLE
    assert main(["judge", "init", "--db", db, "--pool", str(E / "pool.txt"), "--queries", str(E / "topics.txt"),
                 "--corpus", str(E / "corpus.jsonl"), "--scale", str(E / "scale.toml"), "--overlap", "0.5",
                 "--practice", str(E / "practice.qrels"), "--guidelines", str(E / "guidelines.md"),
                 "--name", "covid example"]) == 0
    assert main(["judge", "add-pool", "--db", db, "--pool", str(E / "pool-round2.txt"), "--queries", str(E / "topics.txt"),
                 "--corpus", str(E / "corpus.jsonl")]) == 0
    assert "8 new pairs" in capsys.readouterr().out
    alice = cli_token(capsys, "judge", "add-assessor", "alice", "--db", db)
    bob = cli_token(capsys, "judge", "add-assessor", "bob", "--db", db)
    carol = cli_token(capsys, "judge", "add-assessor", "carol", "--db", db)
    boss = cli_token(capsys, "judge", "add-assessor", "boss", "--admin", "--db", db)
    server = serve(db)
    serious: dict[str, list] = {}

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
        ctx.set_default_timeout(120_000)  # a 2-core machine under load can stall Chromium for a while
        page = ctx.new_page()
        page_errors, dialogs = [], []
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        expect, key = sync_api.expect, page.keyboard.press
        title_el, msg = page.locator("#doc-title"), page.locator("#message")

        # --- log in, by keyboard: a wrong token is refused, the right one opens the practice round
        page.goto(server.url + "/")
        assert page.evaluate("() => document.activeElement.id") == "token"     # autofocus
        serious["login"] = axe_check(page, "login", axe)
        page.keyboard.type("not-a-token")
        key("Enter")
        expect(page.locator("#login-error")).to_contain_text("not valid")
        page.keyboard.type(alice)
        page.screenshot(path=str(shots / "judge-login.png"))
        key("Enter")
        expect(page.locator("#practice-banner")).to_be_visible()
        assert page.locator("#guidelines-link").get_attribute("href") == "/guidelines"
        assert httpx.get(server.url + "/favicon.ico").status_code == 200

        def current():
            expect(title_el).to_have_text(re.compile(".+"))
            return title_el.text_content()

        def wait_moved_on(title):
            for _ in range(800):
                if page.is_visible("#done") or page.is_visible("#practice-result") or \
                        (title_el.text_content() or "") not in ("", title):
                    return
                page.wait_for_timeout(25)
            raise AssertionError(f"the page stayed on {title!r}")

        def note(text):
            key("e")
            page.keyboard.type(text)
            key("Escape")

        # --- the practice round: three pairs with known answers; alice misses one
        practice_shown = []
        while not page.is_visible("#practice-result"):
            title = current()
            docid = by_title(title)
            practice_shown.append(docid)
            if len(practice_shown) == 1:
                assert page.is_visible("#topic-description") and page.is_visible("#topic-narrative")
                page.screenshot(path=str(shots / "judge-practice.png"))
            grade = answers()[docid] if docid != "p1" else 2      # p1's answer is 1: alice says 2
            if grade:
                note("practice note")
            key(str(grade))
            wait_moved_on(title)
        assert sorted(practice_shown) == ["p1", "p2", "p3"]
        expect(page.locator("#practice-summary")).to_contain_text("2 of 3")
        assert page.locator("#practice-table tbody tr.differs").count() == 1
        serious["practice result"] = axe_check(page, "practice result", axe)
        page.screenshot(path=str(shots / "judge-practice-result.png"))
        key("Enter")                                              # start the real work
        expect(page.locator("#practice-banner")).to_be_hidden()
        expect(page.locator("#pair-view")).to_be_visible()

        # --- the real work: ten judgments or more, keys only
        serious["judging"] = axe_check(page, "judging", axe)
        reach = keyboard_reach(page)
        wanted = visible_controls(page, "#pair-view") | {"logout", "guidelines-link"}
        assert wanted - reach == set(), f"not reachable by Tab: {wanted - reach}"
        shown, judged, marked = [], 0, 0
        while not page.is_visible("#done"):
            title = current()
            assert title not in shown
            docid = by_title(title)
            shown.append(title)
            text_box = page.locator("#doc-text")
            # the whole text, no inner scroll box; the panel stays in view when the page scrolls
            assert page.evaluate("() => { const t = document.getElementById('doc-text'); return t.scrollHeight <= t.clientHeight + 1; }")
            marked += page.locator("#pair-view mark.term").count() > 0
            if "<script>" in title:
                assert page.evaluate("typeof window.__pwned") == "undefined"
                assert page.locator("#pair-view script, #pair-view img").count() == 0
                assert "<script>window.__pwned = 2</script>" in text_box.text_content()
                page.screenshot(path=str(shots / "judge-script-inert.png"))
            if docid == "d12":   # a right-to-left override is confined to its own sentence
                order = page.evaluate("""() => { const s = document.querySelectorAll('#doc-text .sentence');
                    const span = s[s.length - 1]; const r = document.createRange();
                    const x = (i) => { const w = document.createTreeWalker(span, NodeFilter.SHOW_TEXT); let n;
                        while ((n = w.nextNode())) { if (i < n.length) break; i -= n.length; }
                        r.setStart(n, i); r.setEnd(n, i + 1); return r.getBoundingClientRect().left; };
                    return [x(0), x(2), x(4)]; }""")
                assert order[0] < order[1] < order[2], order
                assert page.evaluate("() => getComputedStyle(document.querySelector('#doc-text .sentence')).unicodeBidi") == "isolate"
                page.screenshot(path=str(shots / "judge-bidi.png"))
            if judged == 0:
                # grade 2 with no evidence: refused, nothing moves on
                key("2")
                expect(msg).to_contain_text("Evidence required")
                assert "error" in msg.get_attribute("class")
                page.screenshot(path=str(shots / "judge-evidence-refused.png"))
                assert title_el.text_content() == title
                # pick the first sentence, extend the passage by one, quote it
                key("j")
                key("J")
                assert page.locator("#doc-text .sentence.current").count() == min(2, page.locator("#doc-text .sentence").count())
                key("q")
                quoted = page.input_value("#evidence")
                assert quoted.startswith("“") and quoted.endswith("”") and len(quoted) > 10
                page.screenshot(path=str(shots / "judge-page.png"))
                key("h")                                          # query terms off and on again
                expect(page.locator("#toggle-highlight")).to_have_attribute("aria-pressed", "false")
                key("h")
                key("2")
                expect(msg).to_contain_text("Saved grade 2")
            elif judged == 1:
                key("c")
                page.keyboard.type("The abstract is cut off after two sentences.")
                key("Escape")
                key("f")
                key("ArrowDown")                                   # no flag -> unreadable
                assert page.input_value("#flag") == "unreadable"
                key("Escape")
                page.screenshot(path=str(shots / "judge-comment-flag.png"))
                key("0")
                expect(msg).to_contain_text("flagged unreadable, with a comment")
            elif judged == 2:
                note("Background on the topic; no answer.")
                key("1")
                expect(msg).to_contain_text("Saved grade 1")
                wait_moved_on(title)
                key("u")                                           # undo: the same document comes back
                expect(msg).to_contain_text("Undone")
                expect(title_el).to_have_text(title)
                page.screenshot(path=str(shots / "judge-undo.png"))
                note("On second reading: it answers part of it.")
                key("2")
                expect(msg).to_contain_text("revision 2")
                undone = docid
            else:
                key("0")
                expect(msg).to_contain_text("Saved grade 0")
            judged += 1
            wait_moved_on(title)
        assert judged >= 10 and len(shown) == judged
        assert marked >= judged - 2                                  # query terms marked in (nearly) every document
        assert any("<script>" in t for t in shown) and "d12" in {by_title(t) for t in shown}
        expect(page.locator("#done-summary")).to_contain_text(f"You judged {judged}")
        assert not page.is_visible("#scale") and not page.is_visible(".panel")   # no grade panel when done
        serious["done"] = axe_check(page, "done", axe)
        page.screenshot(path=str(shots / "judge-done.png"))
        assert not dialogs and not page_errors

        page.goto(server.url + "/guidelines")
        expect(page.locator("#guidelines h1")).to_have_text("Judging guidelines")
        assert page.locator("#guidelines table").count() == 1
        serious["guidelines"] = axe_check(page, "guidelines", axe)
        page.screenshot(path=str(shots / "judge-guidelines.png"))
        assert "admins" in page.goto(server.url + "/admin").text() or True
        expect(page.locator("#error-heading")).to_have_text("Not for you")          # HTML, not raw JSON

        # --- carol and bob: practice through the API; carol claims a query and stops
        api_practice(server.url, carol)
        api_practice(server.url, bob, {"p3": 1})
        hc, hb = {"Authorization": f"Bearer {carol}"}, {"Authorization": f"Bearer {bob}"}
        assert httpx.get(server.url + "/api/next", headers=hc).status_code == 200    # claims a query
        carol_open = httpx.get(server.url + "/api/progress", headers=hc).json()["open"]
        assert carol_open >= 1

        # --- the admin: reassigns carol's remaining pairs to bob
        admin_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
        admin_ctx.set_default_timeout(120_000)
        admin = admin_ctx.new_page()
        admin.on("pageerror", lambda e: page_errors.append(str(e)))
        admin.goto(server.url + "/")
        admin.fill("#token", boss)
        admin.click("#login-button")
        expect(admin.locator("#agreement")).to_contain_text("Cohen")
        expect(admin.locator("#eta")).to_contain_text("Estimated time to finish")
        qids = [t.strip() for t in admin.locator("#queries tbody td:first-child").all_text_contents()]
        assert qids == ["q1", "q2", "q3", "q4"]
        admin.select_option("#reassign-from", "carol")
        admin.select_option("#reassign-to", "bob")
        admin.check("#reassign-deactivate")
        admin.click("#reassign-button")
        expect(admin.locator("#message")).to_contain_text(
            f"Reassigned {carol_open} open pair{'' if carol_open == 1 else 's'} of carol to bob")
        carol_row = admin.locator('#assessors tr[data-assessor="carol"] td')
        expect(carol_row.nth(1)).to_have_text("no")
        expect(carol_row.nth(4)).to_have_text("0")
        assert httpx.get(server.url + "/api/next", headers=hc).status_code == 401   # carol's token is revoked
        admin.screenshot(path=str(shots / "judge-admin.png"), full_page=True)

        # bob on a phone: document, evidence and grades in view at once
        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        phone.set_default_timeout(120_000)
        ph = phone.new_page()
        ph.goto(server.url + "/")
        ph.fill("#token", bob)
        ph.click("#login-button")
        expect(ph.locator("#doc-title")).to_have_text(re.compile(".+"))
        for sel in ("#doc-title", "#evidence", "button.grade >> nth=0", "button.grade >> nth=-1"):
            box = ph.locator(sel).bounding_box()
            assert box and 0 <= box["y"] and box["y"] + box["height"] <= 844, (sel, box)
        ev, g0 = ph.locator("#evidence").bounding_box(), ph.locator("button.grade >> nth=0").bounding_box()
        assert ev["y"] < g0["y"]                                                   # evidence before grades
        panel = ph.locator(".panel").bounding_box()
        assert panel["height"] <= 0.45 * 844                                       # most of the screen is the document
        ph.evaluate("() => document.getElementById('doc-title').scrollIntoView()")
        assert ph.locator("#doc-text").bounding_box()["y"] < ph.locator(".panel").bounding_box()["y"]  # text above the panel
        ph.screenshot(path=str(shots / "judge-phone.png"))
        serious["judging (phone)"] = axe_check(ph, "judging (phone)", axe)
        phone.close()

        # bob judges all he holds or claims (carol's pairs among them), grade 3 each: disagreements
        n = 0
        while (r := httpx.get(server.url + "/api/next", headers=hb)).status_code == 200:
            p = r.json()
            assert httpx.post(server.url + "/api/judgments", headers=hb, json={
                "qid": p["qid"], "docid": p["docid"], "grade": 3, "evidence": "bob: it answers it",
                "request_id": f"b{n}"}).status_code == 201
            n += 1
        assert n >= carol_open

        # --- the admin adjudicates a disagreement: the final label, with its history
        admin.reload()
        expect(admin.locator("#admin")).to_have_attribute("data-loaded", "yes")   # the status came from the API
        rows = admin.locator("#disagreements form.adjudicate")
        assert rows.count() >= 1
        form = rows.first
        qid, docid = form.get_attribute("data-qid"), form.get_attribute("data-docid")
        form.locator("select").select_option("1")
        form.locator("input[name=evidence]").fill("background, per the scale's definition")
        form.locator("button").click()
        row = admin.locator(f'#disagreements tr[data-docid="{docid}"]')
        expect(row.locator("td.adjudicated")).to_have_text("1")
        row.locator("summary").click()
        expect(row.locator("ol.history")).to_contain_text("adjudicate 1")
        serious["admin"] = axe_check(admin, "admin", axe)
        reach = keyboard_reach(admin, 80)
        assert {"reassign-from", "reassign-to", "reassign-deactivate", "reassign-button", "export-link"} <= reach
        admin.locator("#disagreements").screenshot(path=str(shots / "judge-adjudication.png"))
        with admin.expect_download() as dl:
            admin.click("#export-link")
        qrels = Path(dl.value.path()).read_text()
        assert not page_errors
        browser.close()

    hboss = {"Authorization": f"Bearer {boss}"}
    assert [qid, "0", docid, "1"] in [line.split() for line in qrels.splitlines()]   # the adjudicated grade
    steps = httpx.get(server.url + "/api/pair-history", headers=hboss, params={"qid": qid, "docid": docid}).json()
    assert {s["assessor"] for s in steps} >= {"bob", "boss"} and steps[-1]["kind"] == "adjudicate"
    hist = httpx.get(server.url + "/api/history", headers={"Authorization": f"Bearer {alice}"},
                     params={"qid": _qid_of(undone), "docid": undone}).json()
    assert [(h["kind"], h["grade"]) for h in hist] == [("grade", 1), ("undo", None), ("grade", 2)]
    # the export's side files: the notes (flag and comment) and the evidence with the history
    out = tmp_path / "new.qrels"
    assert main(["judge", "export", "--db", db, "-o", str(out)]) == 0
    notes = (tmp_path / "new.qrels.notes.tsv").read_text().splitlines()
    assert notes[0].split("\t") == ["qid", "docid", "assessor", "kind", "grade", "flag", "comment", "time"]
    assert any(r.split("\t")[2:6] == ["alice", "grade", "0", "unreadable"] and "cut off" in r for r in notes[1:])
    evidence = [json.loads(x) for x in (tmp_path / "new.qrels.evidence.jsonl").read_text().splitlines()]
    adjudicated = next(e for e in evidence if (e["qid"], e["docid"]) == (qid, docid))
    assert adjudicated["assessor"] == "boss" and [h["kind"] for h in adjudicated["history"]][-1] == "adjudicate"
    st = httpx.get(server.url + "/api/status", headers=hboss).json()
    practice = {a["assessor"]: a.get("practice", {}).get("agreement") for a in st["assessors"]}
    assert practice["alice"] == pytest.approx(2 / 3) and practice["bob"] == pytest.approx(2 / 3) and practice["carol"] == 1
    assert {k: len(v) for k, v in serious.items()} == {k: 0 for k in serious}, serious
    print("axe serious/critical per page:", {k: len(v) for k, v in serious.items()},
          "all violations:", {k: len(v) for k, v in AXE_RESULTS.items()})


def _qid_of(docid: str) -> str:
    pools = [(E := EXAMPLE / name) for name in ("pool.txt", "pool-round2.txt")]
    for path in pools:
        for line in path.read_text().splitlines():
            f = line.split()
            if f and not line.startswith("#") and f[1] == docid:
                return f[0]
    raise KeyError(docid)


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
    # the log-in cookie's name, as the other port's server sees it in the Cookie headers it gets
    login_cookie = next(k for k in httpx.get(server.url + "/").cookies if k.startswith("judged_login"))
    evil = f"""<!doctype html><body><form id=f method=post action="{server.url}/login">
      <input name=token value="{bob}"><input name=csrf value="{'t' * 43}"></form>
      <script>document.cookie = "{login_cookie}={'t' * 43}; path=/"; document.getElementById("f").submit();</script>"""

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


def test_a_typed_evidence_note_survives_a_reload(tmp_path, serve):
    """Issue #34: a typed evidence note was lost on reload. The page keeps what was typed
    for a pair (evidence, comment, flag) in this origin's storage until it is sent."""
    db = str(tmp_path / "judging.db")
    tok = make_campaign(db, n_queries=1, docs_per_query=3)
    server = serve(db)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page()
        page.set_default_timeout(120_000)
        expect, title = sync_api.expect, page.locator("#doc-title")
        page.goto(server.url + "/")
        page.fill("#token", tok["alice"])
        page.click("#login-button")
        expect(title).to_have_text(re.compile(".+"))
        first = title.text_content()
        page.keyboard.press("e")
        page.keyboard.type("the second paragraph answers it")
        page.keyboard.press("Escape")
        page.keyboard.press("c")
        page.keyboard.type("half read")
        page.keyboard.press("Escape")
        page.select_option("#flag", "duplicate")
        page.reload()
        expect(title).to_have_text(first)
        expect(page.locator("#evidence")).to_have_value("the second paragraph answers it")
        expect(page.locator("#comment")).to_have_value("half read")
        expect(page.locator("#flag")).to_have_value("duplicate")
        page.keyboard.press("2")
        expect(page.locator("#message")).to_contain_text("Saved grade 2")
        expect(title).not_to_have_text(first)
        page.reload()                                     # the next pair starts empty: the draft went with the grade
        expect(title).not_to_have_text(first)
        assert page.input_value("#evidence") == "" and page.input_value("#comment") == ""
        page.keyboard.press("e")
        page.keyboard.type("a draft left behind")
        page.keyboard.press("Escape")
        page.click("#logout")                             # logging out forgets drafts and the session's key
        expect(page.locator("#login-button")).to_be_visible()
        assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('judged-'))") == []
        browser.close()
    hist = httpx.get(server.url + "/api/history", headers={"Authorization": f"Bearer {tok['alice']}"},
                     params={"qid": "q0", "docid": by_title_of(first)}).json()
    assert [(h["grade"], h["evidence"], h.get("comment"), h.get("flag")) for h in hist] == \
        [(2, "the second paragraph answers it", "half read", "duplicate")]


def by_title_of(title: str) -> str:
    return title.removeprefix("title of ")
