"""Issue #35's attacks on the judging app, each in a real browser (Playwright driving
Debian's Chromium) against a real server process, on SQLite and PostgreSQL:

- a page on another port plants another assessor's session cookie (cookies ignore ports):
  the assessor must never go on working under it, and the cookie that page receives opens
  no API;
- that page makes the browser ``GET /api/next`` with the assessor's cookie: no work claimed;
- wrong tokens from one address: a valid token never used from there still logs in, and
  the guesser is slowed;
- ``judged judge revoke`` / ``rotate`` / ``reassign --deactivate``: the token stops working
  and the open page's session ends at once;
- a page on a name resolving to 127.0.0.1 (DNS rebinding): the server does not answer to a
  Host it was not told about.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager

import httpx
import pytest
from judge_helpers import BROWSER_ARGS, CHROMIUM, OtherPort, log_in, make_campaign, postgres_url, reset_postgres
from sqlalchemy import func, select

from judged.cli import main
from judged.judge import campaign as cp
from judged.judge.db import Database
from judged.judge.models import Assessor, Assignment, Judgment

sync_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no {CHROMIUM}: apt-get install -y chromium", allow_module_level=True)
expect = sync_api.expect
ANY_TEXT = re.compile(".+")


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "judging.db")
        return
    url = postgres_url()
    reset_postgres(url)
    yield url
    reset_postgres(url)


@contextmanager
def chromium(*args):
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[*BROWSER_ARGS, *args])
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser):
    page = browser.new_context().new_page()
    page.set_default_timeout(120_000)       # a 2-core machine under load can stall Chromium for a while
    return page


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def judgments_by(db) -> dict[str, int]:
    database = Database(db)
    with database.read() as s:
        rows = s.execute(select(Assessor.name, func.count(Judgment.id)).join(Judgment, Judgment.assessor_id == Assessor.id)
                         .group_by(Assessor.name)).all()
    database.dispose()
    return dict(rows)


def assignments_of(db, name: str) -> int:
    database = Database(db)
    with database.read() as s:
        n = s.scalar(select(func.count()).select_from(Assignment).join(Assessor, Assignment.assessor_id == Assessor.id)
                     .where(Assessor.name == name))
    database.dispose()
    return n


def browser_log_in(page, url: str, token: str) -> None:
    """Log in through the page's form and wait for the judging page's first document."""
    page.goto(url + "/")
    page.fill("#token", token)
    page.click("#login-button")
    expect(page.locator("#doc-title")).to_have_text(ANY_TEXT)


def grade_zero(page) -> None:
    """Press 0 on the document shown and wait until the page saved it and moved on."""
    title = page.locator("#doc-title").text_content()
    page.evaluate("() => { document.getElementById('message').textContent = ''; }")
    page.keyboard.press("0")
    expect(page.locator("#message")).to_contain_text("Saved grade 0")
    page.wait_for_function("""(title) => !document.getElementById('done').hidden ||
        (document.getElementById('doc-title').textContent || '') !== title""", arg=title)


# --- 1. a session planted from another port --------------------------------------------------

def test_a_session_planted_from_another_port_is_never_worked_under(db, serve):
    """The attack: mallory logs in herself, then her page on 127.0.0.1:OTHER answers
    ``Set-Cookie: <session cookie>=<mallory's>; Path=/``. Alice comes back to the app: before,
    she was silently mallory and her next keypress was stored as mallory's judgment."""
    tok = make_campaign(db, n_queries=3, docs_per_query=3, assessors=("alice", "mallory"), evidence="optional")
    server = serve(db)
    with httpx.Client(base_url=server.url) as m:            # mallory's own session, from her own log-in
        assert log_in(m, tok["mallory"]).status_code == 303
        name, value = next((k, v) for k, v in m.cookies.items() if k.startswith("judged_session"))
    evil = OtherPort(set_cookies=[f"{name}={value}; Path=/; SameSite=Strict"])
    shadow = OtherPort(set_cookies=[f"{name}={value}; Path=/api; SameSite=Strict"])
    try:
        with chromium() as browser:
            page = new_page(browser)
            browser_log_in(page, server.url, tok["alice"])
            grade_zero(page)                                  # alice at work
            page.goto(evil.url + "/")                         # a page on another port plants mallory's session
            page.goto(server.url + "/")                       # alice comes back and goes on with her keys
            page.wait_for_load_state("networkidle")
            for _ in range(3):
                page.keyboard.press("0")
                page.wait_for_timeout(500)
            assert judgments_by(db).get("mallory", 0) == 0, "alice's keys were stored as mallory's"
            refused = page.locator("#session-refused")
            expect(refused).to_be_visible()                   # never silent: the page says what happened
            expect(refused).to_contain_text("mallory")
            page.click("#login-again")                        # alice logs in again and works as alice
            page.fill("#token", tok["alice"])
            page.click("#login-button")
            expect(page.locator("#doc-title")).to_have_text(ANY_TEXT)
            grade_zero(page)
            # a cookie for a longer path (sent first on /api/...) swaps nothing either
            other = page.context.new_page()
            other.goto(shadow.url + "/")
            other.close()
            grade_zero(page)
            expect(page.locator(".who")).to_contain_text("alice")
        assert judgments_by(db) == {"alice": 3}
    finally:
        evil.close()
        shadow.close()


def test_the_cookie_a_page_on_another_port_receives_opens_no_api(db, serve):
    """Cookies ignore ports, so the page on the other port receives the admin's session
    cookie too. Replayed, it opens no API (no status, no export, no claim) and the admin
    page's shell, which holds no campaign data."""
    tok = make_campaign(db, assessors=("alice",))
    server = serve(db)
    evil = OtherPort()
    try:
        with chromium() as browser:
            page = new_page(browser)
            page.goto(server.url + "/")
            page.fill("#token", tok["boss"])
            page.click("#login-button")
            expect(page.locator("#assessors tbody tr")).to_have_count(2)     # the admin page, from the API
            page.goto(evil.url + "/")
        stolen = next(c for c in evil.cookies_seen if "judged_session" in c)
    finally:
        evil.close()
    with httpx.Client(base_url=server.url, headers={"Cookie": stolen}) as thief:
        for method, path in (("GET", "/api/status"), ("GET", "/api/export"), ("GET", "/api/progress"),
                             ("GET", "/api/next"), ("POST", "/api/next")):
            assert thief.request(method, path).status_code == 401, (method, path)
        shell = thief.get("/admin")
        assert shell.status_code == 200 and "alice" not in shell.text and "pairs labelled" not in shell.text
    assert assignments_of(db, "boss") == 0


# --- 2. GET /api/next from another port's page -------------------------------------------------

def test_a_page_on_another_port_cannot_make_the_browser_claim_work(db, serve):
    """The page on the other port loads ``<img src=APP/api/next>`` and fetches it: the
    browser sends the assessor's cookie (same site). Before, each such GET claimed a query."""
    tok = make_campaign(db, n_queries=1, docs_per_query=3, assessors=("alice",), evidence="optional")
    server = serve(db)
    with chromium() as browser:
        page = new_page(browser)
        browser_log_in(page, server.url, tok["alice"])
        for _ in range(3):
            grade_zero(page)
        expect(page.locator("#done")).to_be_visible()
        database = Database(db)                           # the organiser merges a new query in
        with database.write() as s:
            c = cp.find_campaign(s)
            cp.add_pool(s, c, [("q9", f"q9-d{d}") for d in range(3)], "more.txt",
                        {"q9": "query text 9"}, {f"q9-d{d}": ("t", "x") for d in range(3)})
        database.dispose()
        assert assignments_of(db, "alice") == 3
        evil = OtherPort(html=f"""<!doctype html><body><img src="{server.url}/api/next"><img src="{server.url}/api/next?2">
            <script>fetch("{server.url}/api/next", {{mode: "no-cors", credentials: "include"}});</script>""")
        try:
            page.goto(evil.url + "/")
            page.wait_for_load_state("networkidle")
        finally:
            evil.close()
        assert assignments_of(db, "alice") == 3, "a page on another port claimed work for alice"
        page.goto(server.url + "/")                       # her own page claims it when she comes back
        expect(page.locator("#doc-title")).to_have_text(ANY_TEXT)
        assert assignments_of(db, "alice") == 6


# --- 3. the honest assessor beside a guesser -------------------------------------------------

def test_wrong_tokens_from_an_address_do_not_lock_out_a_valid_token(db, serve):
    """Ten wrong bearer tokens from one address made a valid token never used from there get
    429 for a minute, in the log-in form too. Now the guesser is slowed (each 429 takes a
    second) and the newcomer on the same address logs in."""
    tok = make_campaign(db, assessors=("alice", "newcomer"))
    server = serve(db)
    codes, slow = [], []
    for i in range(12):
        t0 = time.monotonic()
        codes.append(httpx.get(server.url + "/api/next", headers=bearer(f"guess-{i}")).status_code)
        slow.append(time.monotonic() - t0)
    assert codes == [401] * 10 + [429] * 2
    with chromium() as browser:
        page = new_page(browser)
        browser_log_in(page, server.url, tok["newcomer"])
        expect(page.locator(".who")).to_contain_text("newcomer")
    assert httpx.get(server.url + "/api/progress", headers=bearer(tok["alice"])).status_code == 200
    assert httpx.get(server.url + "/api/next", headers=bearer("guess-12")).status_code == 429
    assert min(slow[10:]) >= 0.9                          # the guesser waits for every 429


# --- 4. revoke, rotate, reassign --deactivate -------------------------------------------------

def test_revoke_rotate_and_deactivate_end_tokens_and_open_sessions_at_once(db, serve, capsys):
    tok = make_campaign(db, n_queries=4, docs_per_query=3, assessors=("alice", "carol", "dave"), evidence="optional")
    server = serve(db)
    with chromium() as browser:
        carol, alice, dave = new_page(browser), new_page(browser), new_page(browser)
        for page, name in ((carol, "carol"), (alice, "alice"), (dave, "dave")):
            browser_log_in(page, server.url, tok[name])
            grade_zero(page)
        # revoke: carol's open page, her token, her open pairs
        assert main(["judge", "revoke", "carol", "--db", db]) == 0
        assert "carol's token no longer opens" in capsys.readouterr().out
        carol.keyboard.press("0")
        expect(carol.locator("#login-note")).to_contain_text("session ended")
        assert judgments_by(db)["carol"] == 1
        assert httpx.get(server.url + "/api/next", headers=bearer(tok["carol"])).status_code == 401
        assert assignments_of(db, "carol") == 1           # her open pairs went back to the pool
        # rotate: a new token, shown once; the old one and alice's open page end
        assert main(["judge", "rotate", "alice", "--db", db]) == 0
        new_token = capsys.readouterr().out.strip().splitlines()[-1]
        assert new_token != tok["alice"] and len(new_token) >= 40
        alice.keyboard.press("0")
        expect(alice.locator("#login-note")).to_contain_text("session ended")
        assert httpx.get(server.url + "/api/progress", headers=bearer(tok["alice"])).status_code == 401
        assert httpx.get(server.url + "/api/progress", headers=bearer(new_token)).status_code == 200
        alice.fill("#token", new_token)
        alice.click("#login-button")
        expect(alice.locator("#doc-title")).to_have_text(ANY_TEXT)
        grade_zero(alice)
        # reassign --deactivate revokes too
        assert main(["judge", "reassign", "dave", "--deactivate", "--db", db]) == 0
        assert "token is revoked" in capsys.readouterr().out
        dave.keyboard.press("0")
        expect(dave.locator("#login-note")).to_contain_text("session ended")
        assert httpx.get(server.url + "/api/progress", headers=bearer(tok["dave"])).status_code == 401
    assert judgments_by(db) == {"alice": 2, "carol": 1, "dave": 1}
    # rotate gives a revoked assessor access back
    assert main(["judge", "rotate", "carol", "--db", db]) == 0
    back = capsys.readouterr().out.strip().splitlines()[-1]
    assert httpx.post(server.url + "/api/next", headers=bearer(back)).status_code == 200


# --- 5. a name that resolves to this machine -------------------------------------------------

def test_the_server_answers_only_to_the_hosts_it_was_told(db, serve):
    """DNS rebinding: a name the attacker controls resolves to 127.0.0.1, so its pages are
    same-origin with anything they reach there. The server answers only to loopback names
    and those given with --allow-host."""
    make_campaign(db)
    server = serve(db)
    named = serve(db, "--allow-host", "judging.example")
    rules = "--host-resolver-rules=MAP rebind.example 127.0.0.1, MAP judging.example 127.0.0.1"
    with chromium(rules) as browser:
        page = new_page(browser)
        for url, status in ((f"http://rebind.example:{server.port}/", 400),
                            (f"http://rebind.example:{named.port}/", 400),
                            (f"http://judging.example:{named.port}/", 200),
                            (f"http://localhost:{server.port}/", 200),
                            (f"{server.url}/", 200)):
            r = page.goto(url)
            assert r.status == status, url
            if status == 400:
                assert "does not answer to that Host" in r.text()
            else:
                expect(page.locator("#login-button")).to_be_visible()
