"""The dashboard's built files and the headers every one of them is served with.

The page runs only its own script (no inline script, no other origin), talks only to this
API and to the login provider, can be framed by nobody, and sends no Referer (the sign-in
callback's URL briefly holds an authorization code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
INDEX = "index.html"
CONFIG = "config.json"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Flat names only: no separators, no leading dot, nothing that could climb out of STATIC_DIR.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,80}\.[a-z]{2,4}")
# esbuild's content hash in a file name (`app-5KQ2ZC3X.js`): such a file never changes.
_HASHED = re.compile(r".+-[A-Z0-9]{8}\.[a-z]+")


@dataclass(frozen=True)
class Asset:
    name: str
    body: str
    content_type: str

    @property
    def cache_control(self) -> str:
        if _HASHED.fullmatch(self.name):
            return "public, max-age=31536000, immutable"
        return "no-cache"  # index.html names the current hashed files: always revalidate


def content_security_policy(login_origins: tuple[str, ...]) -> str:
    connect = " ".join(("'self'", *login_origins))
    return "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            f"connect-src {connect}",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
            # The page builds its DOM with createElement and textContent only; this makes
            # any string-to-HTML sink (innerHTML and friends) throw instead of parse.
            "require-trusted-types-for 'script'",
            "trusted-types 'none'",
        )
    )


def security_headers(login_origins: tuple[str, ...]) -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(login_origins),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
    }


def is_built() -> bool:
    return (STATIC_DIR / INDEX).is_file()


def load(name: str) -> Asset | None:
    """A built file by its flat name, or None. Read on each request: they are small, and a
    rebuild during `make run` is then served at once."""
    if not _NAME.fullmatch(name):
        return None
    content_type = CONTENT_TYPES.get(Path(name).suffix)
    path = STATIC_DIR / name
    if content_type is None or not path.is_file():
        return None
    return Asset(name, path.read_text(encoding="utf-8"), content_type)
