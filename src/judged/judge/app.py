"""The FastAPI app: the assessor's page, the admin page and the JSON API.

Auth: ``Authorization: Bearer TOKEN``, or the page's session cookie (HttpOnly,
SameSite=Strict) whose unsafe requests must carry the session's ``X-CSRF-Token``.
No or wrong credentials: 401; an assessor on an admin endpoint: 403; too many failed
attempts from one address: 429. Every response carries a strict Content-Security-Policy
(scripts and styles from this origin only, no inline code), so untrusted document text
is inert even if it got past escaping; the page inserts it with ``textContent`` only.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from datetime import timedelta
from pathlib import Path

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from sqlalchemy import delete

from . import auth, campaign as cp
from .db import Database, public_url
from .models import ADJUDICATE, GRADE, SKIP, UNDO, LoginSession, utcnow

HERE = Path(__file__).parent
COOKIE = "judged_session"
SESSION_HOURS = 12
BEARER_CACHE_SECONDS = 60.0
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


class JudgmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: str = Field(min_length=1, max_length=200)
    docid: str = Field(min_length=1, max_length=200)
    grade: StrictInt
    evidence: str = Field(default="", max_length=20_000)
    request_id: str = Field(min_length=1, max_length=200)


class PairIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: str = Field(min_length=1, max_length=200)
    docid: str = Field(min_length=1, max_length=200)
    request_id: str = Field(min_length=1, max_length=200)


class UndoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: str = Field(min_length=1, max_length=200)


def _session_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8")).hexdigest()


class SecurityHeaders:
    """Pure ASGI wrapper adding :data:`SECURITY_HEADERS` to every HTTP response (cheaper than
    an ``@app.middleware("http")``, which runs each request through an extra task)."""

    def __init__(self, app: FastAPI):
        self.app = app
        self.state = app.state
        self._headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self._headers if h[0] not in present]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(db: str, limiter: auth.LoginLimiter | None = None, secure_cookie: bool = False) -> SecurityHeaders:
    """The app for the campaign in ``db`` (any SQLAlchemy URL or a SQLite path)."""
    database = Database(db)
    limiter = limiter or auth.LoginLimiter()
    source = f"judged judge {public_url(db)}"
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    app = FastAPI(title="judged judging", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.database = database
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(cp.Refused)
    async def refused(request: Request, exc: cp.Refused):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"

    def check_limit(request: Request) -> None:
        wait = limiter.blocked(client(request))
        if wait:
            raise HTTPException(429, "too many failed attempts; wait", headers={"Retry-After": str(math.ceil(wait))})

    bearer_cache: dict[str, tuple[float, auth.Who]] = {}  # token hash -> (expiry, who)

    def cached_bearer(request: Request) -> auth.Who | None:
        """The remembered assessor for this request's bearer token, if any (no I/O)."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        hit = bearer_cache.get(auth.hash_token(token.strip()))
        return hit[1] if hit is not None and hit[0] > time.monotonic() else None

    def from_token(token: str) -> auth.Who | None:
        """Bearer tokens are checked against the database, then remembered for
        BEARER_CACHE_SECONDS (assessors are never deleted; a token cannot change)."""
        digest = auth.hash_token(token)
        with database.read() as s:
            found = auth.find_assessor(s, token)
            who = None if found is None else auth.Who.of(found)
        if who is not None:
            bearer_cache[digest] = (time.monotonic() + BEARER_CACHE_SECONDS, who)
        return who

    def identify(request: Request) -> tuple[auth.Who, LoginSession | None] | None:
        header = request.headers.get("authorization")
        if header is not None:
            check_limit(request)
            scheme, _, token = header.partition(" ")
            who = from_token(token.strip()) if scheme.lower() == "bearer" else None
            if who is None:
                limiter.failed(client(request))
                raise HTTPException(401, "no valid token", headers={"WWW-Authenticate": "Bearer"})
            return who, None
        sid = request.cookies.get(COOKIE)
        if sid:
            with database.read() as s:
                ls = s.get(LoginSession, _session_hash(sid))
                if ls is not None and ls.expires_at > utcnow():
                    return auth.Who.of(ls.assessor), ls
        return None

    async def assessor(request: Request) -> auth.Who:
        # a remembered bearer token costs no thread hop; anything else reads the database
        who = cached_bearer(request)
        if who is not None and not limiter.blocked(client(request)):
            return who
        who = await run_in_threadpool(identify, request)
        if who is None:
            raise HTTPException(401, "log in or send Authorization: Bearer TOKEN",
                                headers={"WWW-Authenticate": "Bearer"})
        a, ls = who
        if ls is not None and request.method not in ("GET", "HEAD"):
            sent = request.headers.get("x-csrf-token", "")
            if not auth.same_secret(sent, ls.csrf):
                raise HTTPException(403, "missing or wrong X-CSRF-Token")
        return a

    async def admin(a: auth.Who = Depends(assessor)) -> auth.Who:
        if not a.is_admin:
            raise HTTPException(403, "admins only")
        return a

    # --- JSON API -------------------------------------------------------------------------

    @app.get("/api/next")
    def api_next(a: auth.Who = Depends(assessor)):
        body = cp.serve_next(database, a)
        return Response(status_code=204) if body is None else body

    def _answer(result):
        body, created = result
        return JSONResponse(body, status_code=201 if created else 200)

    @app.post("/api/judgments")
    def api_judgment(j: JudgmentIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, GRADE, j.request_id, qid=j.qid, docid=j.docid,
                                      grade=j.grade, evidence=j.evidence))

    @app.post("/api/skip")
    def api_skip(p: PairIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, SKIP, p.request_id, qid=p.qid, docid=p.docid))

    @app.post("/api/undo")
    def api_undo(u: UndoIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, UNDO, u.request_id))

    @app.get("/api/progress")
    def api_progress(a: auth.Who = Depends(assessor)):
        with database.read() as s:
            return cp.progress(s, a)

    @app.get("/api/history")
    def api_history(qid: str, docid: str, a: auth.Who = Depends(assessor)):
        with database.read() as s:
            return cp.history(s, a, qid, docid)

    @app.post("/api/adjudications")
    def api_adjudicate(j: JudgmentIn, a: auth.Who = Depends(admin)):
        return _answer(cp.record_once(database, a, ADJUDICATE, j.request_id, qid=j.qid, docid=j.docid,
                                      grade=j.grade, evidence=j.evidence))

    @app.get("/api/export", response_class=PlainTextResponse)
    def api_export(disagreement: str = "skip", a: auth.Who = Depends(admin)):
        if disagreement not in cp.DISAGREEMENT_POLICIES:
            raise HTTPException(422, f"disagreement must be one of {cp.DISAGREEMENT_POLICIES}")
        with database.read() as s:
            lines, _, _ = cp.export(s, disagreement, source)
        return PlainTextResponse("".join(line + "\n" for line in lines),
                                 headers={"Content-Disposition": 'attachment; filename="qrels.txt"'})

    @app.get("/api/status")
    def api_status(a: auth.Who = Depends(admin)):
        with database.read() as s:
            return JSONResponse(cp.json_safe(cp.status(s)))

    # --- pages ----------------------------------------------------------------------------

    def page(request: Request, name: str, status_code: int = 200, **context):
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request):
        who = identify(request) if "authorization" not in request.headers else None
        if who is None or who[1] is None:
            return page(request, "login.html")
        with database.read() as s:
            c = cp.get_campaign(s)
            return page(request, "judge.html", assessor=who[0], csrf=who[1].csrf, campaign=c,
                        scale=c.scale["grade"], evidence_required=c.evidence_required)

    @app.post("/login")
    def login(request: Request, token: str = Form("")):
        check_limit(request)
        with database.write() as s:
            found = auth.find_assessor(s, token.strip())
            if found is None:
                limiter.failed(client(request))
                return page(request, "login.html", status_code=401, error="That token is not valid.")
            sid = secrets.token_urlsafe(32)
            s.add(LoginSession(id_hash=_session_hash(sid), assessor_id=found.id, csrf=secrets.token_urlsafe(32),
                               expires_at=utcnow() + timedelta(hours=SESSION_HOURS)))
            target = "/admin" if found.is_admin else "/"
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, sid, max_age=SESSION_HOURS * 3600, httponly=True, samesite="strict",
                            secure=secure_cookie, path="/")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")):
        who = identify(request)
        if who is not None and who[1] is not None and auth.same_secret(csrf, who[1].csrf):
            with database.write() as s:
                s.execute(delete(LoginSession).where(LoginSession.id_hash == who[1].id_hash))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request):
        who = identify(request) if "authorization" not in request.headers else None
        if who is None or who[1] is None:
            return RedirectResponse("/", status_code=303)
        if not who[0].is_admin:
            raise HTTPException(403, "admins only")
        with database.read() as s:
            st = cp.json_safe(cp.status(s))
            c = cp.get_campaign(s)
            return page(request, "admin.html", assessor=who[0], csrf=who[1].csrf, st=st, scale=c.scale["grade"])

    return SecurityHeaders(app)
