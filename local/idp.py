"""A development OpenID Connect issuer for local runs only: signs ID tokens on request.

`make run` starts it on http://127.0.0.1:8001 and the local service trusts it. It has no
real login: anyone who can reach it gets an ID token for any subject. That is the point
locally and would be a disaster anywhere else, so it refuses to start unless LOCAL_MODE=1,
binds loopback only, and is served over plain http, which the service refuses to trust
outside local mode (see `chalicelib/sessions/openid.py`). It lives in `local/`, never deployed.

    GET  /.well-known/openid-configuration   discovery (it promises `iss` in answers)
    GET  /jwks.json                          its public signing key
    POST /token  {"sub": "...", "email": "...", "name": "..."}  ->  {"id_token": "..."}
    POST /workload-token  {"sub": "...", "aud": "...", "claims": {...}}  ->  {"token": "..."}
         a workload's identity token (as GitHub Actions or Kubernetes would issue one), for
         the exchange under a trust policy naming this issuer (workload identity federation);
         `"lifetime"` (seconds, -3600 to 3600; negative: expired already) is for tests
    POST /id-jag  grant_type=urn:ietf:params:oauth:grant-type:token-exchange
         &requested_token_type=urn:ietf:params:oauth:token-type:id-jag
         &subject_token=<an ID token of this issuer>&subject_token_type=…:id_token
         &audience=<the MCP authorization server>&resource=<the MCP server>&client_id=
         [&scope=]  ->  {"access_token": <ID-JAG>, "issued_token_type": …:id-jag,
         "token_type": "N_A", "expires_in"}
         an Identity Assertion JWT Authorization Grant (enterprise-managed authorization)
         for the person the ID token names: as an enterprise IdP would issue one to an MCP
         client its person signed in to (the service trusts it in ENTERPRISE_IDPS locally);
         `lifetime` (seconds, up to 3600) is for tests

and the browser flow of a real provider, OpenID Connect authorization code + PKCE (S256),
for the dashboard and the MCP authorization server:

    GET  /authorize?response_type=code&client_id=&redirect_uri=&code_challenge=
         &code_challenge_method=S256&state=&nonce=[&login_hint=]
         a sign-in form (subject, email, name); with `login_hint` it signs in at once
         (a hint that is an email is the email, and its local part the name)
    POST /authorize                          the form: redirects with code, state and iss
    POST /token  grant_type=authorization_code&code=&redirect_uri=&client_id=&code_verifier=
         ->  {"id_token", "access_token", "token_type", "expires_in"}

The ID token's `aud` is the `client_id` of the request (the service checks it against its
configured audience). Redirect URIs must be loopback. Codes live 60 s and are single use.
Answers carry CORS headers for the origins it was started with (the dashboard's).

    LOCAL_MODE=1 python -m local.idp [--port 8001]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import html
import json
import os
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

AUDIENCE = "memory-auth-local"  # the client id the local service expects in `aud`
ID_TOKEN_LIFETIME = 600  # seconds
WORKLOAD_TOKEN_LIFETIME = 600  # seconds, as GitHub Actions' tokens live about 5-10 minutes
MAX_WORKLOAD_CLAIMS = 20
ID_JAG_LIFETIME = 240  # seconds: the service accepts an ID-JAG at most 5 minutes ahead
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
MAX_BODY_BYTES = 16 * 1024
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CODE_LIFETIME = 60  # seconds
AUTHORIZE_PARAMETERS = (
    "response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method",
    "state", "nonce", "scope",
)
# The sign-in form is static HTML with no script and no style: nothing to allow but the form.
PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"


def sign_in_page_csp(redirect_uri: str) -> str:
    """PAGE_CSP for the form. Chromium holds every redirect after a form's submission to
    form-action too, the whole chain: the form posts here, we redirect to the client's
    (loopback, already checked) redirect URI, and that client may redirect on. The service's
    MCP authorization server does, where a person's consent is remembered: its callback
    sends the browser straight to the MCP client's https redirect URI, which we cannot know.
    So besides ourselves and the client's origin, any https destination is allowed (a
    loopback http MCP client is always shown the consent page, which has a CSP of its own):
    the page is static, with nothing injected that could post a form elsewhere."""
    parts = urlsplit(redirect_uri)
    return PAGE_CSP.replace(
        "form-action 'self'", f"form-action 'self' {parts.scheme}://{parts.netloc} https:"
    )


class NotLocal(RuntimeError):
    pass


class AuthorizeError(ValueError):
    """A request to /authorize that must not be redirected back (bad client or redirect)."""


@dataclass(frozen=True)
class PendingCode:
    client_id: str
    redirect_uri: str
    code_challenge: str
    subject: str
    email: str | None
    nonce: str | None
    expires: float
    name: str | None = None


def hint_name(hint: str) -> str:
    """A person's name for a `login_hint`: `ada.lovelace@x` is "Ada Lovelace"."""
    words = hint.partition("@")[0].replace(".", " ").replace("_", " ").split()
    return " ".join(w[:1].upper() + w[1:] for w in words)[:200] or hint[:200]


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def loopback_redirect(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK


class DevIdentityProvider:
    """The issuer's key and its tokens, without any HTTP (the functional tests use this)."""

    def __init__(self, issuer: str, audience: str = AUDIENCE, private_key: Any = None):
        from cryptography.hazmat.primitives.asymmetric import rsa

        from chalicelib.sessions.access_tokens import public_jwk_from_der

        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self._private_key = private_key or rsa.generate_private_key(
            public_exponent=65537, key_size=2048
        )
        self.jwk = public_jwk_from_der(self._public_der())
        self.kid: str = self.jwk["kid"]
        self._codes: dict[str, PendingCode] = {}
        self._lock = threading.Lock()

    def _public_der(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self._private_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.jwk]}

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/jwks.json",
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            # Every answer at the redirect URI names us in `iss` (RFC 9207), so the clients
            # (the dashboard, the MCP authorization's sign-in) refuse one that does not.
            "authorization_response_iss_parameter_supported": True,
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["openid", "email", "profile"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "email", "email_verified", "name"],
        }

    def claims(
        self,
        subject: str,
        email: str | None = None,
        name: str | None = None,
        audience: str | None = None,
        nonce: str | None = None,
    ) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": audience or self.audience,
            "sub": subject,
            "iat": now,
            "exp": now + ID_TOKEN_LIFETIME,
            "jti": secrets.token_urlsafe(12),
        }
        if email is not None:
            claims["email"] = email
            claims["email_verified"] = True
        if name is not None:
            claims["name"] = name
        if nonce is not None:
            claims["nonce"] = nonce
        return claims

    def sign(self, claims: dict[str, Any], headers: dict[str, Any] | None = None) -> str:
        """Claims signed RS256 with this issuer's key; `headers` may override `kid`, `typ`."""
        import jwt

        return jwt.encode(
            claims,
            self._private_key,
            algorithm="RS256",
            headers={
                name: value
                for name, value in {"kid": self.kid, "typ": "JWT", **(headers or {})}.items()
                if value is not None
            },
        )

    def id_token(self, subject: str, email: str | None = None, name: str | None = None) -> str:
        return self.sign(self.claims(subject, email, name))

    def workload_token(
        self,
        subject: str,
        audience: str,
        extra: dict[str, Any] | None = None,
        lifetime: int = WORKLOAD_TOKEN_LIFETIME,
    ) -> str:
        """A workload's OIDC token: `sub`, `aud` and any further claims (`repository_owner`),
        living WORKLOAD_TOKEN_LIFETIME, like a CI platform's (or `lifetime`, for tests)."""
        claims = {**(extra or {}), **self.claims(subject, audience=audience)}
        if lifetime <= 0:  # expired already: issued before it expired
            claims["iat"] = claims["nbf"] = claims["iat"] + lifetime - 60
        claims["exp"] = claims["iat"] + (lifetime if lifetime > 0 else 60)
        return self.sign(claims)

    def id_jag(self, form: dict[str, str]) -> dict[str, Any] | None:
        """An ID-JAG (its RFC 8693 answer) for the person an ID token of this issuer names,
        for the audience, resource, client and scope the request asks for; None when the
        request is not one (its ID token not ours, expired, a parameter missing)."""
        import jwt

        needed = ("subject_token", "audience", "resource", "client_id")
        if (
            form.get("grant_type") != TOKEN_EXCHANGE
            or form.get("requested_token_type") != ID_JAG_TYPE
            or form.get("subject_token_type") != ID_TOKEN_TYPE
            or not all(form.get(name) for name in needed)
        ):
            return None
        try:
            person = jwt.decode(
                form["subject_token"],
                self._private_key.public_key(),
                algorithms=["RS256"],
                issuer=self.issuer,
                options={"verify_aud": False, "require": ["exp", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        claims = {
            **self.claims(person["sub"], person.get("email"), person.get("name")),
            "aud": form["audience"],
            "resource": form["resource"],
            "client_id": form["client_id"],
        }
        lifetime = form.get("lifetime", "")
        claims["exp"] = claims["iat"] + (
            min(int(lifetime), 3600) if lifetime.isdigit() else ID_JAG_LIFETIME
        )
        if form.get("scope"):
            claims["scope"] = form["scope"]
        return {
            "access_token": self.sign(claims, {"typ": "oauth-id-jag+jwt"}),
            "issued_token_type": ID_JAG_TYPE,
            "token_type": "N_A",
            "expires_in": ID_JAG_LIFETIME,
        }

    def enterprise_idp(self) -> dict[str, str]:
        """This issuer as an entry of the service's ENTERPRISE_IDPS."""
        return {"issuer": self.issuer, "jwksUri": f"{self.issuer}/jwks.json"}

    def check_authorization(self, parameters: dict[str, str]) -> None:
        """Raises AuthorizeError for what must not be redirected to; else the request is fine."""
        client_id = parameters.get("client_id", "")
        redirect_uri = parameters.get("redirect_uri", "")
        if not client_id or len(client_id) > 255:
            raise AuthorizeError("client_id is required.")
        if not loopback_redirect(redirect_uri):
            raise AuthorizeError("redirect_uri must be a loopback http(s) URL.")

    def authorization_error(self, parameters: dict[str, str]) -> str | None:
        """The OAuth error to redirect back with, if any (checked after check_authorization)."""
        if parameters.get("response_type") != "code":
            return "unsupported_response_type"
        if parameters.get("code_challenge_method") != "S256" or not parameters.get(
            "code_challenge"
        ):
            return "invalid_request"
        return None

    def issue_code(
        self,
        parameters: dict[str, str],
        subject: str,
        email: str | None,
        name: str | None = None,
    ) -> str:
        code = secrets.token_urlsafe(32)
        pending = PendingCode(
            client_id=parameters["client_id"],
            redirect_uri=parameters["redirect_uri"],
            code_challenge=parameters["code_challenge"],
            subject=subject,
            email=email,
            name=name,
            nonce=parameters.get("nonce") or None,
            expires=time.monotonic() + CODE_LIFETIME,
        )
        with self._lock:
            self._codes = {c: p for c, p in self._codes.items() if p.expires > time.monotonic()}
            self._codes[code] = pending
        return code

    def redeem(self, parameters: dict[str, str]) -> dict[str, Any] | None:
        """The token answer for a code grant, or None (invalid_grant). A code works once."""
        with self._lock:
            pending = self._codes.pop(parameters.get("code", ""), None)
        if (
            pending is None
            or pending.expires <= time.monotonic()
            or pending.client_id != parameters.get("client_id")
            or pending.redirect_uri != parameters.get("redirect_uri")
            or not hmac.compare_digest(
                s256(parameters.get("code_verifier", "")), pending.code_challenge
            )
        ):
            return None
        claims = self.claims(
            pending.subject,
            pending.email,
            pending.name,
            audience=pending.client_id,
            nonce=pending.nonce,
        )
        return {
            "id_token": self.sign(claims),
            # Only so that generic OAuth clients find the field; nothing accepts it.
            "access_token": secrets.token_urlsafe(24),
            "token_type": "Bearer",
            "expires_in": ID_TOKEN_LIFETIME,
        }

    def trusted_issuer(self) -> dict[str, str]:
        """This issuer as an entry of the service's TRUSTED_ISSUERS."""
        jwks_uri = f"{self.issuer}/jwks.json"
        return {"issuer": self.issuer, "audience": self.audience, "jwksUri": jwks_uri}


SIGN_IN_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in: development identity provider</title></head>
<body>
<main>
<h1>Development sign-in</h1>
<p>Local development only: any subject signs in. The application
<strong>{client}</strong> asks you to sign in.</p>
<form method="post" action="/authorize">
{hidden}
<p><label for="subject">Subject (user name)</label><br>
<input id="subject" name="subject" required maxlength="255" autocomplete="username"
 value="dev-user"></p>
<p><label for="email">Email</label><br>
<input id="email" name="email" type="email" maxlength="255" value="dev-user@example.test"></p>
<p><label for="name">Name</label><br>
<input id="name" name="name" maxlength="200" autocomplete="name" value="Dev User"></p>
<p><button type="submit">Sign in</button></p>
</form>
</main>
</body>
</html>
"""


def _handler(
    provider: DevIdentityProvider, quiet: bool, origins: frozenset[str]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body are two writes (local/gateway.py)

        def _cors(self) -> None:
            origin = self.headers.get("Origin")
            if origin and origin in origins:
                self.send_header("Access-Control-Allow-Origin", origin)
                self.send_header("Vary", "Origin")

        def _send(self, status: int, data: bytes, content_type: str, **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self._cors()
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _answer(self, status: int, body: dict[str, Any], no_store: bool = False) -> None:
            extra = {"Cache_Control": "no-store"} if no_store else {}
            self._send(status, json.dumps(body).encode(), "application/json", **extra)

        def _page(self, status: int, body: str, csp: str = PAGE_CSP) -> None:
            self._send(
                status, body.encode(), "text/html; charset=utf-8",
                Content_Security_Policy=csp, X_Frame_Options="DENY",
                Cache_Control="no-store", Referrer_Policy="no-referrer",
            )

        def _error_page(self, message: str) -> None:
            page = f"<!doctype html><title>Sign-in error</title><p>{html.escape(message)}</p>"
            self._page(400, page)

        def _redirect(self, uri: str, parameters: dict[str, str]) -> None:
            separator = "&" if urlsplit(uri).query else "?"
            location = uri + separator + urlencode(
                {name: value for name, value in parameters.items() if value}
            )
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()

        def _read_body(self) -> bytes | None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self._answer(413, {"error": "invalid_request"})
                return None
            return self.rfile.read(length)

        def do_OPTIONS(self) -> None:  # CORS preflight (a JSON POST from the dashboard)
            self.send_response(204)
            self._cors()
            self.send_header("Access-Control-Allow-Methods", "GET, POST")
            self.send_header("Access-Control-Allow-Headers", "Content-Type")
            self.send_header("Access-Control-Max-Age", "600")
            self.end_headers()

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == "/.well-known/openid-configuration":
                self._answer(200, provider.discovery())
            elif path == "/jwks.json":
                self._answer(200, provider.jwks())
            elif path == "/authorize":
                self._authorize(_single(parse_qs(query)))
            else:
                self._answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            body = self._read_body()
            if body is None:
                return
            media_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if self.path == "/authorize" and media_type == "application/x-www-form-urlencoded":
                self._sign_in(_single(parse_qs(body.decode("utf-8", "replace"))))
            elif self.path == "/token" and media_type == "application/x-www-form-urlencoded":
                self._code_grant(_single(parse_qs(body.decode("utf-8", "replace"))))
            elif self.path == "/token":
                self._scripted_token(body)
            elif self.path == "/workload-token":
                self._workload_token(body)
            elif self.path == "/id-jag" and media_type == "application/x-www-form-urlencoded":
                self._id_jag(_single(parse_qs(body.decode("utf-8", "replace"))))
            else:
                self._answer(404, {"error": "not_found"})

        def _authorize(self, parameters: dict[str, str]) -> None:
            try:
                provider.check_authorization(parameters)
            except AuthorizeError as refused:
                self._error_page(str(refused))
                return
            error = provider.authorization_error(parameters)
            if error is not None:
                self._back(parameters, error=error)
                return
            hint = parameters.get("login_hint", "").strip()
            if hint:  # a test or a script says who signs in: no form
                email = hint if "@" in hint else None
                self._finish(parameters, hint[:255], email, hint_name(hint))
                return
            hidden = "\n".join(
                f'<input type="hidden" name="{name}" value="{html.escape(parameters[name])}">'
                for name in AUTHORIZE_PARAMETERS
                if name in parameters
            )
            page = SIGN_IN_PAGE.format(client=html.escape(parameters["client_id"]), hidden=hidden)
            self._page(200, page, sign_in_page_csp(parameters["redirect_uri"]))

        def _sign_in(self, form: dict[str, str]) -> None:
            try:
                provider.check_authorization(form)
            except AuthorizeError as refused:
                self._error_page(str(refused))
                return
            subject = form.get("subject", "").strip()
            email = form.get("email", "").strip() or None
            name = form.get("name", "").strip()[:200] or None
            if provider.authorization_error(form) is not None or not 0 < len(subject) <= 255:
                self._back(form, error="invalid_request")
                return
            self._finish(form, subject, email, name)

        def _finish(
            self,
            parameters: dict[str, str],
            subject: str,
            email: str | None,
            name: str | None = None,
        ) -> None:
            code = provider.issue_code(parameters, subject, email, name)
            self._back(parameters, code=code)

        def _back(self, parameters: dict[str, str], **outcome: str) -> None:
            """To the client's redirect URI with the outcome, its state and our issuer."""
            self._redirect(parameters["redirect_uri"], {
                **outcome, "state": parameters.get("state", ""), "iss": provider.issuer,
            })

        def _code_grant(self, form: dict[str, str]) -> None:
            if form.get("grant_type") != "authorization_code":
                self._answer(400, {"error": "unsupported_grant_type"})
                return
            answer = provider.redeem(form)
            if answer is None:
                self._answer(400, {
                    "error": "invalid_grant",
                    "error_description": "The code is unknown, used, expired or not yours.",
                })
                return
            self._answer(200, answer, no_store=True)

        def _id_jag(self, form: dict[str, str]) -> None:
            answer = provider.id_jag(form)
            if answer is None:
                self._answer(400, {
                    "error": "invalid_request",
                    "error_description": "Send an RFC 8693 request for an ID-JAG: an ID token"
                    " of this issuer, audience, resource and client_id.",
                })
                return
            self._answer(200, answer, no_store=True)

        def _scripted_token(self, raw: bytes) -> None:
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            subject = body.get("sub") if isinstance(body, dict) else None
            email = body.get("email") if isinstance(body, dict) else None
            name = body.get("name") if isinstance(body, dict) else None
            if (
                not isinstance(subject, str)
                or not 0 < len(subject) <= 255
                or not all(v is None or isinstance(v, str) for v in (email, name))
            ):
                self._answer(400, {
                    "error": "invalid_request",
                    "error_description": 'Send {"sub": "<subject>", "email": "<email>"}.',
                })
                return
            self._answer(200, {"id_token": provider.id_token(subject, email, name)}, no_store=True)

        def _workload_token(self, raw: bytes) -> None:
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            body = body if isinstance(body, dict) else {}
            subject, audience, extra = body.get("sub"), body.get("aud"), body.get("claims", {})
            lifetime = body.get("lifetime", WORKLOAD_TOKEN_LIFETIME)
            reserved = {"iss", "aud", "sub", "iat", "nbf", "exp", "jti"}
            if (
                not all(isinstance(v, str) and 0 < len(v) <= 255 for v in (subject, audience))
                or not isinstance(extra, dict)
                or len(extra) > MAX_WORKLOAD_CLAIMS
                or reserved & set(extra)
                or not isinstance(lifetime, int)
                or not -3600 <= lifetime <= 3600
            ):
                self._answer(400, {
                    "error": "invalid_request",
                    "error_description": 'Send {"sub": "<subject>", "aud": "<audience>", '
                    '"claims": {<other claims, not iss/aud/sub/times>}}.',
                })
                return
            token = provider.workload_token(str(subject), str(audience), extra, lifetime)
            self._answer(200, {"token": token}, no_store=True)

        def log_message(self, format: str, *args: Any) -> None:
            # The request line holds codes and PKCE values in its query: never print it.
            if not quiet:
                sys.stderr.write(f"idp: {self.command} {self.path.split('?')[0]} {args[1:2]}\n")

    return Handler


def _single(parsed: dict[str, list[str]]) -> dict[str, str]:
    """The first value of each parameter (a repeated one is not ours to guess about)."""
    return {name: values[0] for name, values in parsed.items() if values}


class DevIdpServer:
    """The development issuer over HTTP on loopback, served from a daemon thread."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8001,
        quiet: bool = True,
        cors_origins: tuple[str, ...] = (),
    ):
        if os.environ.get("LOCAL_MODE") != "1":
            raise NotLocal("the development identity provider runs only with LOCAL_MODE=1")
        if host not in LOOPBACK:
            raise NotLocal("the development identity provider binds loopback only")
        self._server = ThreadingHTTPServer((host, port), BaseHTTPRequestHandler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://{host}:{self.port}"
        self.provider = DevIdentityProvider(self.endpoint)
        self._server.RequestHandlerClass = _handler(self.provider, quiet, frozenset(cors_origins))
        self._thread: threading.Thread | None = None

    def start(self) -> DevIdpServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    try:
        server = DevIdpServer(args.host, args.port, quiet=False)
    except NotLocal as refused:
        print(f"refusing to start: {refused}", file=sys.stderr)
        return 2
    print(f"development OpenID issuer on {server.endpoint}", flush=True)
    print("TRUSTED_ISSUERS entry: " + json.dumps(server.provider.trusted_issuer()), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
