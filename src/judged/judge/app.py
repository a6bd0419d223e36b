"""The FastAPI app: the assessor's page, the admin page and the JSON API.

Auth: ``Authorization: Bearer TOKEN``, or the page's session cookie (HttpOnly,
SameSite=Strict) whose unsafe requests must carry the session's ``X-CSRF-Token``; the
log-in and log-out forms carry their own CSRF tokens, and :mod:`.guard` refuses unsafe
requests from another origin (another port of the same host included).
No or wrong credentials: 401; an assessor on an admin endpoint: 403; too many failed
attempts from one address: 429 (:class:`~.auth.LoginLimiter`). Every bad request is a 4xx
with a short message that never echoes the request: text fields refuse NUL and lone
surrogates (:func:`~.inputs.text_problem`, the same on every database), bodies over
:data:`~.guard.MAX_BODY_BYTES` get 413. Every response carries a strict
Content-Security-Policy (scripts and styles from this origin only, no inline code), so
untrusted document text is inert even if it got past escaping; the page inserts it with
``textContent`` only.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, Form, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt
from sqlalchemy import delete
from sqlalchemy.exc import DataError

from ..core.words import counted
from . import auth, campaign as cp
from .db import Database, public_url
from .assign import PracticeFinished
from .guard import Guard
from .inputs import MAX_ID_LENGTH, text_problem
from .models import ADJUDICATE, FLAGS, GRADE, SKIP, UNDO, LoginSession, utcnow

HERE = Path(__file__).parent
COOKIE = "judged_session"
LOGIN_COOKIE = "judged_login"   # the log-in form's CSRF token (double submit), set with the form
SESSION_HOURS = 12
BEARER_CACHE_SECONDS = 60.0
MAX_EVIDENCE = 20_000
MAX_MESSAGE = 200               # a 422's message is cut to this many characters


def _storable(text: str) -> str:
    why = text_problem(text)
    if why is not None:
        raise ValueError(why)
    return text


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH), AfterValidator(_storable)]
Text = Annotated[str, Field(max_length=MAX_EVIDENCE), AfterValidator(_storable)]


Flag = Literal[FLAGS]  # type: ignore[valid-type]
ERROR_TITLES = {401: "Log in first", 403: "Not for you", 404: "Not found", 405: "Not allowed", 413: "Too large",
                422: "Refused", 429: "Too many attempts"}


class JudgmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: Id
    docid: Id
    grade: StrictInt
    evidence: Text = ""
    request_id: Id
    comment: Text = ""
    flag: Flag | None = None


class PairIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: Id
    docid: Id
    request_id: Id
    comment: Text = ""
    flag: Flag | None = None


class ReassignIn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: Id = Field(alias="from")
    target: Id | None = Field(default=None, alias="to")
    deactivate: bool = False


def render_markdown(text: str) -> str:
    """Guidelines as HTML: CommonMark plus tables, raw HTML in the Markdown escaped, links
    checked by markdown-it (no ``javascript:``); the page's CSP runs nothing in any case."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").render(text)


class UndoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: Id


def _session_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8")).hexdigest()


def short_errors(exc: RequestValidationError) -> list[dict]:
    """Pydantic's errors without the input they refused (never echoed: it may be megabytes,
    or text that cannot be encoded), each message cut to :data:`MAX_MESSAGE` characters."""
    out = []
    for e in exc.errors():
        msg = str(e.get("msg", "invalid"))
        msg = msg if text_problem(msg) is None else "invalid text"
        out.append({"loc": [str(x)[:MAX_ID_LENGTH] for x in e.get("loc", ())], "msg": msg[:MAX_MESSAGE],
                    "type": str(e.get("type", ""))[:50]})
    return out


def create_app(db: str, limiter: auth.LoginLimiter | None = None, secure_cookie: bool = False) -> Guard:
    """The app for the campaign in ``db`` (any SQLAlchemy URL or a SQLite path)."""
    database = Database(db)
    limiter = limiter or auth.LoginLimiter()
    source = f"judged judge {public_url(db)}"
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    templates.env.globals["counted"] = counted  # "1 pair goes", "2 pairs go" (judged.core.words)
    app = FastAPI(title="judged judging", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.database = database
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(cp.Refused)
    async def refused(request: Request, exc: cp.Refused):
        return JSONResponse({"detail": str(exc)[:MAX_MESSAGE]}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        """API clients get JSON; a person in a browser on a page gets a page."""
        if not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            return page(request, "error.html", status_code=exc.status_code, message=exc.detail,
                        title=ERROR_TITLES.get(exc.status_code, "Error"))
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": short_errors(exc)}, status_code=422)

    @app.exception_handler(DataError)
    async def refused_by_database(request: Request, exc: DataError):
        # a safety net: the models refuse what a database cannot store before it gets there
        return JSONResponse({"detail": "the database refused this data"}, status_code=422)

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"

    def check_limit(request: Request, token: str) -> None:
        wait = limiter.blocked(client(request), token)
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
            scheme, _, token = header.partition(" ")
            token = token.strip()
            check_limit(request, token)
            who = from_token(token) if scheme.lower() == "bearer" else None
            if who is None:
                limiter.failed(client(request), token)
                raise HTTPException(401, "no valid token", headers={"WWW-Authenticate": "Bearer"})
            limiter.succeeded(client(request), token)
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
        if who is not None:   # it logged in from somewhere: the limiter remembered it there
            if not limiter.blocked(client(request), request.headers["authorization"].partition(" ")[2].strip()):
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
        try:
            body = cp.serve_next(database, a)
        except PracticeFinished:
            with database.read() as s:
                report = cp.practice_report(s, a)
            return JSONResponse({"detail": "practice round finished: read your result (GET /api/practice), then "
                                           "POST /api/practice/start", "practice": report}, status_code=409)
        return Response(status_code=204) if body is None else body

    def _answer(result):
        body, created = result
        return JSONResponse(body, status_code=201 if created else 200)

    @app.post("/api/judgments")
    def api_judgment(j: JudgmentIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, GRADE, j.request_id, qid=j.qid, docid=j.docid,
                                      grade=j.grade, evidence=j.evidence, comment=j.comment, flag=j.flag))

    @app.post("/api/skip")
    def api_skip(p: PairIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, SKIP, p.request_id, qid=p.qid, docid=p.docid,
                                      comment=p.comment, flag=p.flag))

    @app.post("/api/undo")
    def api_undo(u: UndoIn, a: auth.Who = Depends(assessor)):
        return _answer(cp.record_once(database, a, UNDO, u.request_id))

    @app.get("/api/progress")
    def api_progress(a: auth.Who = Depends(assessor)):
        with database.read() as s:
            return cp.progress(s, a)

    @app.get("/api/history")
    def api_history(qid: Annotated[Id, Query()], docid: Annotated[Id, Query()], a: auth.Who = Depends(assessor)):
        with database.read() as s:
            return cp.history(s, a, qid, docid)

    @app.get("/api/practice")
    def api_practice(a: auth.Who = Depends(assessor)):
        with database.read() as s:
            return cp.practice_report(s, a)

    @app.post("/api/practice/start")
    def api_practice_start(a: auth.Who = Depends(assessor)):
        with database.write() as s:
            return cp.start_after_practice(s, a)

    @app.post("/api/adjudications")
    def api_adjudicate(j: JudgmentIn, a: auth.Who = Depends(admin)):
        return _answer(cp.record_once(database, a, ADJUDICATE, j.request_id, qid=j.qid, docid=j.docid,
                                      grade=j.grade, evidence=j.evidence, comment=j.comment, flag=j.flag))

    @app.get("/api/pair-history")
    def api_pair_history(qid: Annotated[Id, Query()], docid: Annotated[Id, Query()], a: auth.Who = Depends(admin)):
        with database.read() as s:
            return cp.pair_history(s, a.campaign_id, qid, docid)

    @app.post("/api/reassign")
    def api_reassign(r: ReassignIn, a: auth.Who = Depends(admin)):
        with database.write() as s:
            return cp.reassign(s, cp.get_campaign(s, a.campaign_id), r.source, r.target, r.deactivate)

    @app.get("/api/export", response_class=PlainTextResponse)
    def api_export(disagreement: str = "skip", a: auth.Who = Depends(admin)):
        if disagreement not in cp.DISAGREEMENT_POLICIES:
            raise HTTPException(422, f"disagreement must be one of {cp.DISAGREEMENT_POLICIES}")
        with database.read() as s:
            lines, _, _ = cp.export(s, disagreement, source, a.campaign_id)
        return PlainTextResponse("".join(line + "\n" for line in lines),
                                 headers={"Content-Disposition": 'attachment; filename="qrels.txt"'})

    @app.get("/api/status")
    def api_status(a: auth.Who = Depends(admin)):
        with database.read() as s:
            return JSONResponse(cp.json_safe(cp.status(s, a.campaign_id)))

    # --- pages ----------------------------------------------------------------------------

    def page(request: Request, name: str, status_code: int = 200, **context):
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    def login_page(request: Request, status_code: int = 200, error: str | None = None):
        """The log-in form with its CSRF token: the cookie the form must send back (double
        submit; the guard's origin check refuses a form posted from another port)."""
        token = request.cookies.get(LOGIN_COOKIE)
        if not token or len(token) != 43:
            token = secrets.token_urlsafe(32)
        response = page(request, "login.html", status_code=status_code, login_csrf=token, error=error)
        response.set_cookie(LOGIN_COOKIE, token, max_age=SESSION_HOURS * 3600, httponly=True, samesite="strict",
                            secure=secure_cookie, path="/")
        return response

    def browser_session(request: Request):
        who = identify(request) if "authorization" not in request.headers else None
        return None if who is None or who[1] is None else who

    def session_context(s, who) -> dict:
        c = cp.get_campaign(s, who[0].campaign_id)
        return {"assessor": who[0], "csrf": who[1].csrf, "campaign": c, "has_guidelines": bool(c.guidelines.strip())}

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request):
        who = browser_session(request)
        if who is None:
            return login_page(request)
        with database.read() as s:
            ctx = session_context(s, who)
            c = ctx["campaign"]
            return page(request, "judge.html", scale=c.scale["grade"], evidence_required=c.evidence_required,
                        flags=FLAGS, **ctx)

    @app.get("/guidelines", response_class=HTMLResponse)
    def guidelines(request: Request):
        who = browser_session(request)
        if who is None:
            return RedirectResponse("/", status_code=303)
        with database.read() as s:
            ctx = session_context(s, who)
            c = ctx["campaign"]
            body = render_markdown(c.guidelines) if ctx["has_guidelines"] else None
            return page(request, "guidelines.html", guidelines_html=body, scale=c.scale["grade"], **ctx)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.post("/login")
    def login(request: Request, token: str = Form("", max_length=1000), csrf: str = Form("", max_length=100)):
        expected = request.cookies.get(LOGIN_COOKIE, "")
        if not expected or not auth.same_secret(csrf, expected):
            return login_page(request, 403, "The log-in form expired or came from another page: log in again here.")
        token = token.strip()
        check_limit(request, token)
        with database.write() as s:
            found = auth.find_assessor(s, token)
            if found is None:
                limiter.failed(client(request), token)
                return login_page(request, 401, "That token is not valid.")
            limiter.succeeded(client(request), token)
            sid = secrets.token_urlsafe(32)
            s.add(LoginSession(id_hash=_session_hash(sid), assessor_id=found.id, csrf=secrets.token_urlsafe(32),
                               expires_at=utcnow() + timedelta(hours=SESSION_HOURS)))
            target = "/admin" if found.is_admin else "/"
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, sid, max_age=SESSION_HOURS * 3600, httponly=True, samesite="strict",
                            secure=secure_cookie, path="/")
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("", max_length=100)):
        who = identify(request) if "authorization" not in request.headers else None
        if who is not None and who[1] is not None:
            if not auth.same_secret(csrf, who[1].csrf):
                raise HTTPException(403, "missing or wrong CSRF token: log out from the page's button")
            with database.write() as s:
                s.execute(delete(LoginSession).where(LoginSession.id_hash == who[1].id_hash))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request):
        who = browser_session(request)
        if who is None:
            return RedirectResponse("/", status_code=303)
        if not who[0].is_admin:
            raise HTTPException(403, "This page is for the campaign's admins; your work is on the judging page.")
        with database.read() as s:
            ctx = session_context(s, who)
            st = cp.json_safe(cp.status(s, who[0].campaign_id))
            return page(request, "admin.html", st=st, scale=ctx["campaign"].scale["grade"], **ctx)

    return Guard(app)
