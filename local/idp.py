"""A development OpenID Connect issuer for local runs only: signs ID tokens on request.

`make run` starts it on http://127.0.0.1:8001 and the local service trusts it. It has no
login at all: anyone who can reach it gets an ID token for any subject. That is the point
locally and would be a disaster anywhere else, so it refuses to start unless LOCAL_MODE=1,
binds loopback only, and is served over plain http, which the service refuses to trust
outside local mode (see `chalicelib/oidc.py`). It lives in `local/`, which is never deployed.

    GET  /.well-known/openid-configuration   discovery (issuer, jwks_uri, token_endpoint)
    GET  /jwks.json                          its public signing key
    POST /token  {"sub": "...", "email": "..."}  ->  {"id_token": "..."}

    LOCAL_MODE=1 python -m local.idp [--port 8001]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

AUDIENCE = "memory-auth-local"  # the client id the local service expects in `aud`
ID_TOKEN_LIFETIME = 600  # seconds
MAX_BODY_BYTES = 16 * 1024
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class NotLocal(RuntimeError):
    pass


class DevIdentityProvider:
    """The issuer's key and its tokens, without any HTTP (the functional tests use this)."""

    def __init__(self, issuer: str, audience: str = AUDIENCE, private_key: Any = None):
        from cryptography.hazmat.primitives.asymmetric import rsa

        from chalicelib.login.access_tokens import public_jwk_from_der

        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self._private_key = private_key or rsa.generate_private_key(
            public_exponent=65537, key_size=2048
        )
        self.jwk = public_jwk_from_der(self._public_der())
        self.kid: str = self.jwk["kid"]

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
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "email", "email_verified", "name"],
        }

    def claims(
        self, subject: str, email: str | None = None, name: str | None = None
    ) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
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

    def trusted_issuer(self) -> dict[str, str]:
        """This issuer as an entry of the service's TRUSTED_ISSUERS."""
        jwks_uri = f"{self.issuer}/jwks.json"
        return {"issuer": self.issuer, "audience": self.audience, "jwksUri": jwks_uri}


def _handler(provider: DevIdentityProvider, quiet: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: dict[str, Any], no_store: bool = False) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if no_store:
                self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/.well-known/openid-configuration":
                self._answer(200, provider.discovery())
            elif self.path == "/jwks.json":
                self._answer(200, provider.jwks())
            else:
                self._answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            if self.path != "/token":
                self._answer(404, {"error": "not_found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._answer(413, {"error": "invalid_request"})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"null")
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

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

    return Handler


class DevIdpServer:
    """The development issuer over HTTP on loopback, served from a daemon thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8001, quiet: bool = True):
        if os.environ.get("LOCAL_MODE") != "1":
            raise NotLocal("the development identity provider runs only with LOCAL_MODE=1")
        if host not in LOOPBACK:
            raise NotLocal("the development identity provider binds loopback only")
        self._server = ThreadingHTTPServer((host, port), BaseHTTPRequestHandler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://{host}:{self.port}"
        self.provider = DevIdentityProvider(self.endpoint)
        self._server.RequestHandlerClass = _handler(self.provider, quiet)
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
