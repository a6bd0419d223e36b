"""The FastAPI app: the assessor's page, the admin page and the JSON API.

Auth: ``Authorization: Bearer TOKEN`` (scripts), or a browser session bound to this server
and to the page that logged in (:class:`~.auth.SessionKeys`): a cookie this server process
signed (HttpOnly, SameSite=Strict) opens the page shells (names, the scale, the
guidelines), and every API call must also carry the session's page key as
``X-Session-Key``, which the page keeps in its origin's storage (origins separate ports,
cookies do not). A session cookie planted by a page on another port arrives without its
key: the API answers 401 ``{"session": "replaced"}`` and the page says so instead of working
under it. State changes only by POST: ``POST /api/next`` claims work; ``GET /api/next``
with a session is 405 (a bearer token's GET still claims, for scripts written for earlier
versions: no browser sends a bearer token by itself). :mod:`.guard` refuses unsafe
requests and API reads from another origin, and any request for a Host the server does
not answer to.

No or wrong credentials: 401; an assessor on an admin endpoint: 403; wrong tokens past a
limit: 429, slowly (:class:`~.auth.LoginLimiter`; right tokens always pass). Every bad
request is a 4xx with a short message that never echoes the request: text fields refuse
NUL and lone surrogates (:func:`~.inputs.text_problem`, the same on every database), bodies
over :data:`~.guard.MAX_BODY_BYTES` get 413. Every response carries a strict
Content-Security-Policy (scripts and styles from this origin only, no inline code), so
untrusted document text is inert even if it got past escaping; the pages insert it with
``textContent`` only.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
from dataclasses import dataclass
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
from .guard import LOOPBACK_HOSTS, Guard
from .inputs import MAX_ID_LENGTH, text_problem
from .models import ADJUDICATE, FLAGS, GRADE, SKIP, UNDO, LoginSession, utcnow

HERE = Path(__file__).parent
SESSION_KEY_HEADER = "x-session-key"
SESSION_HOURS = 12
MAX_EVIDENCE = 20_000
MAX_MESSAGE = 200               # a 422's message is cut to this many characters
LOGIN_NOTES = {"ended": "Your session ended (it expired, your access was revoked or renewed, or the server "
                        "restarted). Log in again with your token.",
               "out": "You are logged out."}


def _storable(text: str) -> str:
    why = text_problem(text)
    if why is not None:
        raise ValueError(why)
    return text


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH), AfterValidator(_storable)]
Text = Annotated[str, Field(max_length=MAX_EVIDENCE), AfterValidator(_storable)]


Flag = Literal[FLAGS]  # type: ignore[valid-type]
ERROR_TITLES = {400: "Bad request", 401: "Log in first", 403: "Not for you", 404: "Not found", 405: "Not allowed",
                413: "Too large", 422: "Refused", 429: "Too many attempts"}


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


def _sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


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


def cookie_values(request: Request, name: str) -> list[str]:
    """Every value the request's Cookie header gives ``name``, in order: a page on another
    port can add a second cookie of the same name (a longer Path is sent first)."""
    out = []
    for header in request.headers.getlist("cookie"):
        for part in header.split(";"):
            key, eq, value = part.strip().partition("=")
            if eq and key == name and value:
                out.append(value.strip('"'))
    return out


@dataclass(frozen=True)
class BrowserSession:
    """A browser session found from its cookie: who, its row, its id (for the page's tag)."""
    who: auth.Who
    row: LoginSession
    sid: str


class Refusal(Exception):
    """Credentials were sent and refused: 401, or 429 after a wait when past a limit."""

    def __init__(self, detail: str, wait: float = 0.0, replaced: bool = False):
        super().__init__(detail)
        self.detail, self.wait, self.replaced = detail, wait, replaced


REPLACED = ("this browser's session was not started on this page (another page or tab replaced it): "
            "nothing was done; log in again")


def create_app(db: str, limiter: auth.LoginLimiter | None = None, secure_cookie: bool = False,
               allowed_hosts=LOOPBACK_HOSTS, keys: auth.SessionKeys | None = None) -> Guard:
    """The app for the campaigns in ``db`` (any SQLAlchemy URL or a SQLite path), answering
    requests for ``allowed_hosts`` (names or addresses; loopback by default) only."""
    database = Database(db)
    with database.write() as s:
        cp.purge_sessions(s)
    limiter = limiter or auth.LoginLimiter()
    keys = keys or auth.SessionKeys(secure=secure_cookie)
    source = f"judged judge {public_url(db)}"
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    templates.env.globals["counted"] = counted  # "1 pair goes", "2 pairs go" (judged.core.words)
    app = FastAPI(title="judged judging", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.database = database
    app.state.session_keys = keys
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
        body = exc.detail if isinstance(exc.detail, dict) else {"detail": exc.detail}
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": short_errors(exc)}, status_code=422)

    @app.exception_handler(DataError)
    async def refused_by_database(request: Request, exc: DataError):
        # a safety net: the models refuse what a database cannot store before it gets there
        return JSONResponse({"detail": "the database refused this data"}, status_code=422)

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"

    def check_token(request: Request, token: str) -> auth.Who:
        """The assessor whose token this is (looked up every time: a revoked or rotated token
        stops working at once), else :class:`Refusal` (counted by the limiter)."""
        who = auth.who_holds(database, token)
        if who is None:
            raise Refusal("no valid token", limiter.failed(client(request), token))
        return who

    def browser_session(request: Request, key: str | None = None) -> BrowserSession | None:
        """The session of this request's cookie (this process signed it; not expired; its
        assessor not revoked). With ``key`` (an API call), only the session that key belongs
        to: a cookie whose key is missing or another is :class:`Refusal` ``replaced``."""
        candidates = [sid for sid in map(keys.session_id, cookie_values(request, keys.cookie)) if sid]
        if not candidates:
            return None
        now, mismatch = utcnow(), False
        with database.read() as s:
            for sid in candidates:
                ls = s.get(LoginSession, _sha256(sid))
                if ls is None or ls.expires_at <= now or auth.is_revoked(ls.assessor):
                    continue
                if key is not None and not auth.same_secret(_sha256(key), ls.csrf):
                    mismatch = True
                    continue
                return BrowserSession(auth.Who.of(ls.assessor), ls, sid)
        if mismatch:
            raise Refusal(REPLACED, replaced=True)
        return None

    def identify(request: Request) -> auth.Who | None:
        """An API request's assessor: its bearer token, else its session with the page key."""
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer":
                raise Refusal("no valid token", limiter.failed(client(request), token))
            return check_token(request, token)
        key = request.headers.get(SESSION_KEY_HEADER, "")
        found = browser_session(request, key)
        return None if found is None else found.who

    async def refusal(exc: Refusal) -> HTTPException:
        if exc.wait:    # past a limit: slowed, without holding a thread
            await asyncio.sleep(limiter.slow)
            return HTTPException(429, "too many wrong tokens; wait", headers={"Retry-After": str(math.ceil(exc.wait))})
        if exc.replaced:
            return HTTPException(401, {"detail": exc.detail, "session": "replaced"})
        return HTTPException(401, exc.detail, headers={"WWW-Authenticate": "Bearer"})

    async def assessor(request: Request) -> auth.Who:
        try:
            who = await run_in_threadpool(identify, request)
        except Refusal as exc:
            raise await refusal(exc) from None
        if who is None:
            raise HTTPException(401, "log in or send Authorization: Bearer TOKEN",
                                headers={"WWW-Authenticate": "Bearer"})
        return who

    async def admin(a: auth.Who = Depends(assessor)) -> auth.Who:
        if not a.is_admin:
            raise HTTPException(403, "admins only")
        return a

    # --- JSON API -------------------------------------------------------------------------

    def next_pair(a: auth.Who):
        try:
            body = cp.serve_next(database, a)
        except PracticeFinished:
            with database.read() as s:
                report = cp.practice_report(s, a)
            return JSONResponse({"detail": "practice round finished: read your result (GET /api/practice), then "
                                           "POST /api/practice/start", "practice": report}, status_code=409)
        return Response(status_code=204) if body is None else body

    @app.post("/api/next")
    def api_next(a: auth.Who = Depends(assessor)):
        return next_pair(a)

    @app.get("/api/next")
    def api_next_get(request: Request, a: auth.Who = Depends(assessor)):
        if "authorization" not in request.headers:
            raise HTTPException(405, "GET /api/next changes nothing: POST /api/next claims and serves the next pair",
                                headers={"Allow": "POST"})
        return next_pair(a)     # a bearer token: claims, as earlier versions did

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

    def login_page(request: Request, status_code: int = 200, error: str | None = None, note: str | None = None):
        """The log-in form with its CSRF token: the cookie the form must send back (double
        submit; the guard's origin check refuses a form posted from another port)."""
        token = request.cookies.get(keys.login_cookie)
        if not token or len(token) != 43:
            token = secrets.token_urlsafe(32)
        response = page(request, "login.html", status_code=status_code, login_csrf=token, error=error, note=note)
        response.set_cookie(keys.login_cookie, token, max_age=SESSION_HOURS * 3600, httponly=True, samesite="strict",
                            secure=secure_cookie, path="/")
        return response

    def page_session(request: Request) -> BrowserSession | None:
        """The session a page is shown to (the cookie alone: a navigation carries no key;
        the page checks the session's tag before it calls the API)."""
        return browser_session(request) if "authorization" not in request.headers else None

    def session_context(s, found: BrowserSession) -> dict:
        c = cp.get_campaign(s, found.who.campaign_id)
        return {"assessor": found.who, "session_tag": keys.tag(found.sid), "campaign": c,
                "has_guidelines": bool(c.guidelines.strip())}

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request):
        found = page_session(request)
        if found is None:
            return login_page(request)
        with database.read() as s:
            ctx = session_context(s, found)
            c = ctx["campaign"]
            return page(request, "judge.html", scale=c.scale["grade"], evidence_required=c.evidence_required,
                        flags=FLAGS, **ctx)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, why: str = ""):
        """The log-in form, whatever session the browser holds (to leave one it did not start)."""
        return login_page(request, note=LOGIN_NOTES.get(why))

    @app.get("/guidelines", response_class=HTMLResponse)
    def guidelines(request: Request):
        found = page_session(request)
        if found is None:
            return RedirectResponse("/", status_code=303)
        with database.read() as s:
            ctx = session_context(s, found)
            c = ctx["campaign"]
            body = render_markdown(c.guidelines) if ctx["has_guidelines"] else None
            return page(request, "guidelines.html", guidelines_html=body, scale=c.scale["grade"], **ctx)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "public, max-age=86400"})

    def start_session(token: str, client_address: str):
        """Log-in's database work: the assessor and a new session (sid, page key), or the
        seconds of a 429 / None for a 401."""
        with database.write() as s:
            found = auth.find_assessor(s, token)
            if found is None:
                return None, limiter.failed(client_address, token)
            cp.purge_sessions(s)
            sid, key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            s.add(LoginSession(id_hash=_sha256(sid), assessor_id=found.id, csrf=_sha256(key),
                               expires_at=utcnow() + timedelta(hours=SESSION_HOURS)))
            return (auth.Who.of(found), sid, key), 0.0

    @app.post("/login")
    async def login(request: Request, token: str = Form("", max_length=1000), csrf: str = Form("", max_length=100)):
        """The log-in form. The page's script posts it asking for JSON and gets the session's
        page key, once, in the answer (never in a cookie: cookies ignore ports); a plain form
        post gets a 303 and the cookie alone, which opens the pages but not the API."""
        page_script = "application/json" in request.headers.get("accept", "")

        def refused(status: int, message: str, headers: dict | None = None):
            if page_script:
                return JSONResponse({"detail": message}, status_code=status, headers=headers)
            response = login_page(request, status, message)
            response.headers.update(headers or {})
            return response

        expected = request.cookies.get(keys.login_cookie, "")
        if not expected or not auth.same_secret(csrf, expected):
            return refused(403, "The log-in form expired or came from another page: reload this page and log in here.")
        started, wait = await run_in_threadpool(start_session, token.strip(), client(request))
        if started is None:
            if wait:
                await asyncio.sleep(limiter.slow)       # slowed, without holding a thread
                return refused(429, f"Too many wrong tokens from your address or this token: wait {math.ceil(wait)} s "
                                    "(a valid token works meanwhile).", {"Retry-After": str(math.ceil(wait))})
            return refused(401, "That token is not valid.")
        who, sid, key = started
        target = "/admin" if who.is_admin else "/"
        if page_script:
            response = JSONResponse({"assessor": who.name, "session_key": key, "session_tag": keys.tag(sid),
                                     "next": target})
        else:
            response = RedirectResponse(target, status_code=303)
        response.set_cookie(keys.cookie, keys.cookie_value(sid), max_age=SESSION_HOURS * 3600, httponly=True,
                            samesite="strict", secure=secure_cookie, path="/")
        response.delete_cookie(keys.login_cookie, path="/", secure=secure_cookie, httponly=True, samesite="strict")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("", max_length=100)):
        found = page_session(request)
        if found is not None:
            if not auth.same_secret(_sha256(csrf), found.row.csrf):
                raise HTTPException(403, "missing or wrong session key: log out from the page's button")
            with database.write() as s:
                s.execute(delete(LoginSession).where(LoginSession.id_hash == found.row.id_hash))
        response = RedirectResponse("/login?why=out", status_code=303)
        response.delete_cookie(keys.cookie, path="/", secure=secure_cookie, httponly=True, samesite="strict")
        return response

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request):
        found = page_session(request)
        if found is None:
            return RedirectResponse("/", status_code=303)
        if not found.who.is_admin:
            raise HTTPException(403, "This page is for the campaign's admins; your work is on the judging page.")
        with database.read() as s:
            ctx = session_context(s, found)
            # the shell only: the status comes from GET /api/status, which needs the page key
            return page(request, "admin.html", scale=ctx["campaign"].scale["grade"], **ctx)

    return Guard(app, allowed_hosts)
