"""The ASGI wrapper in front of every request: the Host allow-list, security headers, a
request size limit and the refusal of requests sent from another origin.

- A request whose ``Host`` is not one the server answers to (:data:`LOOPBACK_HOSTS` by
  default; ``judged judge serve --allow-host NAME`` adds names) is answered 400 before
  anything else: a DNS-rebinding page (``evil.example`` resolving to 127.0.0.1) reaches no
  route.

- Every HTTP response gets :data:`SECURITY_HEADERS` (a strict Content-Security-Policy among
  them), unless the app set the header itself.
- A request body longer than :data:`MAX_BODY_BYTES` is answered 413 before the app reads
  it (whether or not it declared a Content-Length), and nothing of it is echoed.
- An unsafe request (POST, PUT, PATCH, DELETE) that a browser sent from another origin is
  answered 403 before any route runs. The origin is scheme, host *and port*: a page on
  ``http://127.0.0.1:9999`` is *same-site* with the app on ``http://127.0.0.1:8000`` (so
  SameSite cookies go along) but not same-origin, and is refused. The test, in order:
  ``Sec-Fetch-Site`` ``cross-site`` or ``same-site``: refused; an ``Origin`` header: it must
  be the app's own (``null`` only with ``Sec-Fetch-Site: same-origin``); otherwise a
  ``Referer``: its origin must be the app's own. A request with none of the three is not
  from a browser page (scripts use bearer tokens); the session and log-in tokens still
  guard it. The app's own origin is the request's scheme and ``Host`` header (a proxy's
  ``X-Forwarded-Proto`` counts only with ``judged judge serve --trust-proxy``).
- A read of the API (``/api/...``) that a browser made for another site's page
  (``Sec-Fetch-Site`` ``cross-site`` or ``same-site``: an ``<img>`` or a ``fetch`` on
  another port) is refused too: no request from another page reaches the API.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
# Referrer-Policy same-origin, not no-referrer: under no-referrer a browser sends
# "Origin: null" with the page's own form posts, and the origin check needs the real one;
# cross-origin requests still get no referrer (and no URL here holds a secret)
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
MAX_BODY_BYTES = 256 * 1024   # a judgment with 20,000 characters of evidence, all escaped, fits
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")   # the Host names a server answers to by default
DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL or an Origin header value, None if it has none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS.get(scheme, -1)


def own_origin(scope) -> tuple[str, str, int] | None:
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    return _origin(f"{scope.get('scheme', 'http')}://{host}") if host else None


def host_name(value: str) -> str | None:
    """The name or address of a ``Host`` header (no port; an IPv6 address without its
    brackets; lower case, no trailing dot), None if it is not one."""
    value = value.strip().lower()
    if value.startswith("["):
        name, close, rest = value[1:].partition("]")
        return name if close and (not rest or rest[:1] == ":" and rest[1:].isdigit()) and name else None
    name, colon, port = value.partition(":")
    if colon and not port.isdigit() or ":" in port:
        return None
    name = name.rstrip(".")
    return name or None


def allowed_host_names(names) -> frozenset[str] | None:
    """The names a server answers to, normalised as :func:`host_name`; None: any."""
    if names is None:
        return None
    out = set()
    for n in names:
        n = n.strip().lower()
        out.add(n[1:-1] if n.startswith("[") and n.endswith("]") else n.rstrip("."))
    return frozenset(out)


def cross_origin(scope) -> str | None:
    """Why this request comes from another origin, or None (same origin, or not a browser)."""
    headers = {}
    for k, v in scope.get("headers") or []:
        headers.setdefault(k.lower(), v.decode("latin-1"))
    site = headers.get(b"sec-fetch-site", "").lower()
    if site in ("cross-site", "same-site"):
        return f"sent from another site's page (Sec-Fetch-Site: {site})"
    mine = own_origin(scope)
    origin = headers.get(b"origin")
    if origin is not None:
        if origin.strip() == "null":
            return None if site == "same-origin" else "sent from an opaque origin (Origin: null)"
        return None if _origin(origin) == mine and mine is not None else "sent from another origin"
    referer = headers.get(b"referer")
    if referer:
        return None if _origin(referer) == mine and mine is not None else "sent from another origin's page"
    return None


class Guard:
    """Pure ASGI wrapper (cheaper than an ``@app.middleware("http")``, which runs each request
    through an extra task): headers, body size limit, cross-origin refusal."""

    def __init__(self, app, allowed_hosts=LOOPBACK_HOSTS, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.state = app.state
        self.allowed_hosts = allowed_host_names(allowed_hosts)
        self.max_body = max_body
        self._headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def _refuse(self, send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"), *self._headers]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.allowed_hosts is not None:
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host_name(host) not in self.allowed_hosts:
                return await self._refuse(send, 400, "this server does not answer to that Host (judged judge serve "
                                                     "--allow-host NAME adds a name)")
        if scope["method"] not in UNSAFE_METHODS and scope.get("path", "").startswith("/api/"):
            site = dict(scope.get("headers") or []).get(b"sec-fetch-site", b"").decode("latin-1").lower()
            if site in ("cross-site", "same-site"):
                return await self._refuse(send, 403, f"refused: sent from another site's page (Sec-Fetch-Site: {site})")
        if scope["method"] in UNSAFE_METHODS:
            why = cross_origin(scope)
            if why is not None:
                return await self._refuse(send, 403, f"refused: {why}")
            declared = dict(scope.get("headers") or []).get(b"content-length")
            if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
                return await self._refuse(send, 413, f"request body over {self.max_body} bytes")
            # read the body here, at most max_body bytes, and hand it on in one piece
            chunks, size = [], 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    return await self._refuse(send, 413, f"request body over {self.max_body} bytes")
                chunks.append(chunk)
                if not message.get("more_body"):
                    break
            body, delivered = b"".join(chunks), False

            async def receive_body():
                nonlocal delivered
                if delivered:
                    return await receive()
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}

            receive = receive_body

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self._headers if h[0] not in present]
            await send(message)

        await self.app(scope, receive, send_with_headers)
