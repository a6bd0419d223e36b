"""The pages: the judging page, the guidelines, the admin page's shell, and logging in and
out (a CSRF-checked form; the session's page key given once to the page's script)."""

from __future__ import annotations

import asyncio
import math
import secrets
from datetime import timedelta
from pathlib import Path

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool
from sqlalchemy import delete

from . import auth, campaign as cp
from .access import BrowserSession, Judging, Shared, client, page_session, sha256
from .models import FLAGS, LoginSession, utcnow

HERE = Path(__file__).parent
SESSION_HOURS = 12
LOGIN_NOTES = {"ended": "Your session ended (it expired, your access was revoked or renewed, or the server "
                        "restarted). Log in again with your token.",
               "out": "You are logged out."}

router = APIRouter()


def render_markdown(text: str) -> str:
    """Guidelines as HTML: CommonMark plus tables, raw HTML in the Markdown escaped, links
    checked by markdown-it (no ``javascript:``); the page's CSP runs nothing in any case."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").render(text)


def login_page(j: Judging, request: Request, status_code: int = 200, error: str | None = None,
               note: str | None = None):
    """The log-in form with its CSRF token: the cookie the form must send back (double
    submit; the guard's origin check refuses a form posted from another port)."""
    token = request.cookies.get(j.keys.login_cookie)
    if not token or len(token) != 43:
        token = secrets.token_urlsafe(32)
    response = j.page(request, "login.html", status_code=status_code, login_csrf=token, error=error, note=note)
    response.set_cookie(j.keys.login_cookie, token, max_age=SESSION_HOURS * 3600, httponly=True, samesite="strict",
                        secure=j.secure_cookie, path="/")
    return response


def session_context(j: Judging, s, found: BrowserSession) -> dict:
    c = cp.get_campaign(s, found.who.campaign_id)
    return {"assessor": found.who, "session_tag": j.keys.tag(found.sid), "campaign": c,
            "has_guidelines": bool(c.guidelines.strip())}


@router.get("/", response_class=HTMLResponse)
def index(request: Request, j: Shared):
    found = page_session(j, request)
    if found is None:
        return login_page(j, request)
    with j.database.read() as s:
        ctx = session_context(j, s, found)
        c = ctx["campaign"]
        return j.page(request, "judge.html", scale=c.scale["grade"], evidence_required=c.evidence_required,
                      flags=FLAGS, **ctx)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, j: Shared, why: str = ""):
    """The log-in form, whatever session the browser holds (to leave one it did not start)."""
    return login_page(j, request, note=LOGIN_NOTES.get(why))


@router.get("/guidelines", response_class=HTMLResponse)
def guidelines(request: Request, j: Shared):
    found = page_session(j, request)
    if found is None:
        return RedirectResponse("/", status_code=303)
    with j.database.read() as s:
        ctx = session_context(j, s, found)
        c = ctx["campaign"]
        body = render_markdown(c.guidelines) if ctx["has_guidelines"] else None
        return j.page(request, "guidelines.html", guidelines_html=body, scale=c.scale["grade"], **ctx)


@router.get("/favicon.ico", include_in_schema=False)
def favicon():
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})


def start_session(j: Judging, token: str, client_address: str):
    """Log-in's database work: the assessor and a new session (sid, page key), or the
    seconds of a 429 / None for a 401."""
    with j.database.write() as s:
        found = auth.find_assessor(s, token)
        if found is None:
            return None, j.limiter.failed(client_address, token)
        cp.purge_sessions(s)
        sid, key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        s.add(LoginSession(id_hash=sha256(sid), assessor_id=found.id, csrf=sha256(key),
                           expires_at=utcnow() + timedelta(hours=SESSION_HOURS)))
        return (auth.Who.of(found), sid, key), 0.0


@router.post("/login")
async def login(request: Request, j: Shared, token: str = Form("", max_length=1000),
                csrf: str = Form("", max_length=100)):
    """The log-in form. The page's script posts it asking for JSON and gets the session's
    page key, once, in the answer (never in a cookie: cookies ignore ports); a plain form
    post gets a 303 and the cookie alone, which opens the pages but not the API."""
    page_script = "application/json" in request.headers.get("accept", "")

    def refused(status: int, message: str, headers: dict | None = None):
        if page_script:
            return JSONResponse({"detail": message}, status_code=status, headers=headers)
        response = login_page(j, request, status, message)
        response.headers.update(headers or {})
        return response

    expected = request.cookies.get(j.keys.login_cookie, "")
    if not expected or not auth.same_secret(csrf, expected):
        return refused(403, "The log-in form expired or came from another page: reload this page and log in here.")
    started, wait = await run_in_threadpool(start_session, j, token.strip(), client(request))
    if started is None:
        if wait:
            await asyncio.sleep(j.limiter.slow)       # slowed, without holding a thread
            return refused(429, f"Too many wrong tokens from your address or this token: wait {math.ceil(wait)} s "
                                "(a valid token works meanwhile).", {"Retry-After": str(math.ceil(wait))})
        return refused(401, "That token is not valid.")
    who, sid, key = started
    target = "/admin" if who.is_admin else "/"
    if page_script:
        response = JSONResponse({"assessor": who.name, "session_key": key, "session_tag": j.keys.tag(sid),
                                 "next": target})
    else:
        response = RedirectResponse(target, status_code=303)
    response.set_cookie(j.keys.cookie, j.keys.cookie_value(sid), max_age=SESSION_HOURS * 3600, httponly=True,
                        samesite="strict", secure=j.secure_cookie, path="/")
    response.delete_cookie(j.keys.login_cookie, path="/", secure=j.secure_cookie, httponly=True, samesite="strict")
    return response


@router.post("/logout")
def logout(request: Request, j: Shared, csrf: str = Form("", max_length=100)):
    found = page_session(j, request)
    if found is not None:
        if not auth.same_secret(sha256(csrf), found.row.csrf):
            raise HTTPException(403, "missing or wrong session key: log out from the page's button")
        with j.database.write() as s:
            s.execute(delete(LoginSession).where(LoginSession.id_hash == found.row.id_hash))
    response = RedirectResponse("/login?why=out", status_code=303)
    response.delete_cookie(j.keys.cookie, path="/", secure=j.secure_cookie, httponly=True, samesite="strict")
    return response


@router.get("/admin", response_class=HTMLResponse)
def admin_page(request: Request, j: Shared):
    found = page_session(j, request)
    if found is None:
        return RedirectResponse("/", status_code=303)
    if not found.who.is_admin:
        raise HTTPException(403, "This page is for the campaign's admins; your work is on the judging page.")
    with j.database.read() as s:
        ctx = session_context(j, s, found)
        # the shell only: the status comes from GET /api/status, which needs the page key
        return j.page(request, "admin.html", scale=ctx["campaign"].scale["grade"], **ctx)
