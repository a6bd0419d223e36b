"""The FastAPI app: the assessor's page, the admin page and the JSON API (the routers of
:mod:`.pages` and :mod:`.api`; who a request is: :mod:`.access`).

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

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..core.words import counted
from . import api, auth, campaign as cp, pages
from .access import Judging
from .db import Database, public_url
from .guard import LOOPBACK_HOSTS, Guard
from .inputs import MAX_ID_LENGTH, text_problem

HERE = Path(__file__).parent
MAX_MESSAGE = 200               # a 422's message is cut to this many characters
ERROR_TITLES = {400: "Bad request", 401: "Log in first", 403: "Not for you", 404: "Not found", 405: "Not allowed",
                413: "Too large", 422: "Refused", 429: "Too many attempts"}


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


def create_app(db: str, limiter: auth.LoginLimiter | None = None, secure_cookie: bool = False,
               allowed_hosts=LOOPBACK_HOSTS, keys: auth.SessionKeys | None = None) -> Guard:
    """The app for the campaigns in ``db`` (any SQLAlchemy URL or a SQLite path), answering
    requests for ``allowed_hosts`` (names or addresses; loopback by default) only."""
    database = Database(db)
    with database.write() as s:
        cp.purge_sessions(s)
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html
    templates.env.globals["counted"] = counted  # "1 pair goes", "2 pairs go" (judged.core.words)
    shared = Judging(database, limiter or auth.LoginLimiter(), keys or auth.SessionKeys(secure=secure_cookie),
                     templates, f"judged judge {public_url(db)}", secure_cookie)
    app = FastAPI(title="judged judging", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.judging, app.state.database, app.state.session_keys = shared, database, shared.keys
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(cp.Refused)
    async def refused(request: Request, exc: cp.Refused):
        return JSONResponse({"detail": str(exc)[:MAX_MESSAGE]}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        """API clients get JSON; a person in a browser on a page gets a page."""
        if not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            return shared.page(request, "error.html", status_code=exc.status_code, message=exc.detail,
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

    app.include_router(api.router)
    app.include_router(pages.router)
    return Guard(app, allowed_hosts)
