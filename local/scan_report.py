"""Replays a leaked-key report, signed like GitHub's, against the local service.

    python -m local.scan_report --token svc_… [--service URL] [--signer URL]
        [--connection-file .local/connection.env]
        [--url https://github.com/o/r/blob/x/config.py]
        [--tamper none|unsigned|wrong-signature|other-body]

`--service` and `--signer` default to the running stack's (the connection file `make run`
writes, infra/connection.py), so it reaches the stack on whatever ports it uses.

The body is GitHub's JSON array of `{"token", "type", "url", "source"}`; the local signer
(`local/secret_scanning.py`, started by `make run`) signs it. `--tamper` sends what an
attacker could: no signature, a signature by another key under the published identifier, or
a genuine signature replayed with another body. It prints the service's status and answer
(token hashes only: the token itself is never printed).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

import httpx

from infra.connection import CONNECTION_FILE, NoRunningStack, read_connection

REPORT_PATH = "/v1/auth/secret-scanning/github"
TOKEN_TYPE = "memory_auth_api_key"
TAMPERS = ("none", "unsigned", "wrong-signature", "other-body")


def report_body(tokens: list[str], url: str, source: str = "content") -> bytes:
    return json.dumps(
        [{"token": t, "type": TOKEN_TYPE, "url": url, "source": source} for t in tokens]
    ).encode()


def signed(signer: str, body: bytes) -> tuple[str, str]:
    """(key identifier, signature) from the local signer."""
    answer = httpx.post(signer.rstrip("/") + "/sign", content=body, timeout=10)
    answer.raise_for_status()
    data = answer.json()
    return str(data["key_identifier"]), str(data["signature"])


def foreign_signature(body: bytes) -> str:
    """A valid ECDSA P-256 signature of `body`, by a key nobody published."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return base64.b64encode(key.sign(body, ec.ECDSA(hashes.SHA256()))).decode("ascii")


def send(
    service: str, signer: str, tokens: list[str], url: str, tamper: str = "none"
) -> httpx.Response:
    body = report_body(tokens, url)
    identifier, signature = signed(signer, body)
    headers = {"Content-Type": "application/json", "User-Agent": "GitHub-Secret-Scanning-Replay"}
    if tamper == "wrong-signature":
        signature = foreign_signature(body)
    if tamper == "other-body":
        body = report_body(tokens, url + "?replayed")
    if tamper != "unsigned":
        headers["Github-Public-Key-Identifier"] = identifier
        headers["Github-Public-Key-Signature"] = signature
    return httpx.post(service.rstrip("/") + REPORT_PATH, content=body, headers=headers, timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", action="append", required=True, help="repeat for several")
    parser.add_argument("--service", help="default: the running stack's (MEMORY_ENDPOINT)")
    parser.add_argument("--signer", help="default: the running stack's signer")
    parser.add_argument("--connection-file", type=Path, default=CONNECTION_FILE)
    parser.add_argument("--url", default="https://github.com/example/repo/blob/main/config.py")
    parser.add_argument("--tamper", choices=TAMPERS, default="none")
    args = parser.parse_args(argv)
    if args.service is None or args.signer is None:
        try:
            connection = read_connection(args.connection_file)
        except NoRunningStack as missing:
            parser.error(f"{missing}; or give --service and --signer")
        args.service = args.service or connection["MEMORY_ENDPOINT"]
        args.signer = args.signer or connection["MEMORY_LOCAL_SCAN_SIGNER"]
    answer = send(args.service, args.signer, args.token, args.url, args.tamper)
    body: Any = answer.json() if answer.content else None
    print(json.dumps({"status": answer.status_code, "answer": body}))
    return 0 if answer.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
