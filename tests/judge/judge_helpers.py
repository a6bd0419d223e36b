"""Helpers for the judging app's tests: campaigns on temporary databases, a real server
process on a loopback port, the PostgreSQL URL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judged.judge import campaign as cp
from judged.judge.db import Database
from judged.judge.inputs import read_judging_scale

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "judging"
CHROMIUM = "/usr/bin/chromium"
# headless, no sandbox (root in CI), and nothing fetched in the background: the tests reach
# only loopback addresses
BROWSER_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-domain-reliability", "--no-first-run", "--metrics-recording-only",
                "--disable-features=OptimizationHints,MediaRouter,Translate"]
PG_ENV = "JUDGED_TEST_POSTGRES_URL"
LOOPBACK = "http://127.0.0.1:8000"   # a TestClient's base URL: a Host the app answers to


def make_campaign(db: str, n_queries: int = 2, docs_per_query: int = 3, overlap: float = 0.0,
                  assessors=("alice",), admins=("boss",), evidence: str = "required", texts=None) -> dict[str, str]:
    """A synthetic campaign; returns name -> token."""
    database = Database(db)
    pairs = [(f"q{q}", f"q{q}-d{d}") for q in range(n_queries) for d in range(docs_per_query)]
    queries = {f"q{q}": f"query text {q}" for q in range(n_queries)}
    corpus = {d: (f"title of {d}", (texts or {}).get(d, f"text of {d}")) for _, d in pairs}
    scale = read_judging_scale(None)
    scale = type(scale)(scale.grades, evidence == "required")
    tokens = {}
    with database.write() as s:
        c = cp.init_campaign(s, "test", pairs, "pool.txt", "0" * 64, queries, corpus, scale, overlap)
        for name in assessors:
            tokens[name] = cp.add_assessor(s, name)
        for name in admins:
            tokens[name] = cp.add_assessor(s, name, admin=True)
    database.dispose()
    return tokens


def login_form_token(client) -> str:
    """GET the log-in page (which sets the log-in cookie) and return its form's CSRF token."""
    page = client.get("/").text                      # the log-in form, unless a session opens the page
    if "login-button" not in page:
        page = client.get("/login").text
    return page.split('name="csrf" value="')[1].split('"')[0]


def log_in(client, token: str, **kw):
    """Post the log-in form as a browser without the page's script would (the form's CSRF
    token included): 303 and the session cookie alone, which opens the pages, not the API."""
    return client.post("/login", data={"token": token, "csrf": login_form_token(client)}, **kw)


def page_log_in(client, token: str):
    """Log in as the page's script does (static/login.js): the answer holds the session's
    page key, which the client then sends with every request (``X-Session-Key``)."""
    r = client.post("/login", data={"token": token, "csrf": login_form_token(client)},
                    headers={"Accept": "application/json"})
    if r.status_code == 200:
        client.headers["X-Session-Key"] = r.json()["session_key"]
    return r


def session_cookie(client) -> tuple[str, str]:
    """(name, value) of the client's session cookie."""
    return next((k, v) for k, v in client.cookies.items() if "judged_session" in k)


def reset_postgres(url: str) -> None:
    """Drop every table (this schema's and an older one's a migration test made)."""
    from sqlalchemy import MetaData

    database = Database(url, create=False)
    found = MetaData()
    found.reflect(database.engine)
    found.drop_all(database.engine)
    database.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``judged judge serve`` in its own process, on 127.0.0.1."""

    def __init__(self, db: str, log: Path, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log)
        self.log = open(log, "wb")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "judged", "judge", "serve", "--db", db,
                                      "--port", str(self.port), *args], stdout=self.log, stderr=subprocess.STDOUT, env=env)
        import httpx
        deadline = time.monotonic() + 120   # a 2-core machine under heavy load starts Python slowly
        while True:
            try:
                if httpx.get(self.url + "/api/next", timeout=1).status_code == 401:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {Path(log).read_text()}")
            time.sleep(0.1)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


def postgres_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"no PostgreSQL: set {PG_ENV} (.ci/run starts a local cluster and sets it)")
    try:
        database = Database(url, create=False)
        with database.engine.connect():
            pass
        database.dispose()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"PostgreSQL at {PG_ENV} cannot be reached: {exc}")
    return url


class OtherPort:
    """A page on another port of 127.0.0.1 (the attacker's): answers every GET with ``html``
    and the ``Set-Cookie`` headers given, and keeps the Cookie headers browsers sent it
    (cookies do not separate ports: the app's come here too)."""

    def __init__(self, html: str = "<!doctype html><title>elsewhere</title><p>hello", set_cookies=()):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.html, self.set_cookies, self.cookies_seen = html, list(set_cookies), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.cookies_seen.extend(self.headers.get_all("Cookie") or [])
                body = outer.html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for c in outer.set_cookies:
                    self.send_header("Set-Cookie", c)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
