"""Import legacy API keys so that they authenticate, and answer reveal with 410.

Reads JSON Lines, one key a line:

    {"ownerId": "usr_…", "label": "…", "category": "admin"|"workspace",
     "workspaceId": "ws_…" (workspace keys only),
     "key": "legacy_…"  or  "sha256": "<hex SHA-256 of the plaintext>",
     "createdAt": "2026-01-01T00:00:00Z" (optional; default now; expiry is 90 days later)}

The label follows the API's rule (1 to 100 characters after trimming, no control
characters), and the key's id sorts by its `createdAt`, so it lists among the owner's keys
where its age puts it. Only the SHA-256 is stored, never the plaintext, and no ciphertext:
these keys predate encryption at rest, so reveal answers 410 `key_not_revealable`.
Importing the same key twice skips it. Uses the same environment variables as the service
(AUTH_TABLE, …), all checked before the first line is read; with `--local`, the running
local stack's instead (the connection file `make run` writes, infra/connection.py).

    python -m tools.import_legacy_keys keys.jsonl [--dry-run] [--local [FILE]]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chalicelib import ids
from chalicelib.access.scopes import ADMIN, CATEGORIES, SCOPES_BY_CATEGORY, WORKSPACE
from chalicelib.clock import parse_rfc3339
from chalicelib.config import ConfigurationError, Settings
from chalicelib.keys.model import ApiKey
from chalicelib.keys.plaintext import hint, parse_key
from chalicelib.keys.store import KeyNotCreated
from chalicelib.runtime import Services
from chalicelib.strict_parsing import InvalidText, clean_text
from infra.connection import (
    CONNECTION_FILE,
    NoRunningStack,
    read_connection,
    service_environment,
)

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class InvalidLine(ValueError):
    pass


@dataclass(frozen=True)
class LegacyKey:
    owner_id: str
    label: str
    category: str = ADMIN
    workspace_id: str | None = None
    plaintext: str | None = None
    sha256: str | None = None
    created_at: str | None = None

    def __repr__(self) -> str:  # never show the plaintext
        return f"LegacyKey(owner_id={self.owner_id!r}, label={self.label!r})"

    def digest(self) -> str:
        if self.plaintext is not None:
            parsed = parse_key(self.plaintext)
            if parsed is None or not parsed.legacy:
                raise InvalidLine("key is not a legacy_ key")
            return parsed.digest
        if self.sha256 is None or not _SHA256.match(self.sha256.lower()):
            raise InvalidLine("give either key or a 64-hex-digit sha256")
        return self.sha256.lower()

    def clean_label(self) -> str:
        try:
            return clean_text(self.label)
        except InvalidText as invalid:
            raise InvalidLine(f"label {invalid}") from None

    def validate(self) -> None:
        if not ids.is_user_id(self.owner_id):
            raise InvalidLine("ownerId must look like usr_…")
        self.clean_label()
        if self.category not in CATEGORIES:
            raise InvalidLine("category must be admin or workspace")
        if (self.category == WORKSPACE) != (self.workspace_id is not None):
            raise InvalidLine("workspaceId is required for workspace keys and only for them")
        if self.workspace_id is not None and not (
            isinstance(self.workspace_id, str) and ids.is_workspace_id(self.workspace_id)
        ):
            raise InvalidLine("workspaceId must look like ws_…")
        if (self.plaintext is None) == (self.sha256 is None):
            raise InvalidLine("give exactly one of key and sha256")


def parse_line(line: str) -> LegacyKey:
    try:
        data = json.loads(line)
    except ValueError:
        raise InvalidLine("not JSON") from None
    if not isinstance(data, dict):
        raise InvalidLine("not a JSON object")
    allowed = {"ownerId", "label", "category", "workspaceId", "key", "sha256", "createdAt"}
    unknown = set(data) - allowed
    if unknown:
        raise InvalidLine(f"unknown field {sorted(unknown)[0]!r}")
    try:
        return LegacyKey(
            owner_id=str(data["ownerId"]),
            label=str(data["label"]),
            category=str(data.get("category", ADMIN)),
            workspace_id=data.get("workspaceId"),
            plaintext=data.get("key"),
            sha256=data.get("sha256"),
            created_at=data.get("createdAt"),
        )
    except KeyError as missing:
        raise InvalidLine(f"missing field {missing.args[0]!r}") from None


def to_api_key(legacy: LegacyKey, services: Services) -> ApiKey:
    legacy.validate()
    try:
        created = parse_rfc3339(legacy.created_at) if legacy.created_at else None
    except ValueError:
        raise InvalidLine("createdAt must look like 2026-01-01T00:00:00Z") from None
    created = created or services.clock.now()
    label, digest = legacy.clean_label(), legacy.digest()
    try:
        return ApiKey.new(
            owner_id=legacy.owner_id,
            label=label,
            category=legacy.category,
            workspace_id=legacy.workspace_id,
            scopes=SCOPES_BY_CATEGORY[legacy.category],
            key_hash=digest,
            hint=hint(legacy.plaintext) if legacy.plaintext else None,
            created_at=created,
            revealable=False,
        )
    except ValueError as out_of_range:  # a createdAt before 1970 makes no key id
        raise InvalidLine(f"createdAt: {out_of_range}") from None


@dataclass
class Outcome:
    imported: int = 0
    skipped: int = 0
    failed: int = 0


def import_keys(services: Services, keys: Iterable[LegacyKey], dry_run: bool = False) -> Outcome:
    outcome = Outcome()
    for legacy in keys:
        api_key = to_api_key(legacy, services)
        if dry_run:
            outcome.imported += 1
            continue
        try:
            services.key_store.create(api_key, ciphertext=None, now=services.clock.now())
        except KeyNotCreated:
            outcome.skipped += 1  # this hash is already a credential
            continue
        outcome.imported += 1
    return outcome


def connect(local: bool) -> Services:
    """The services the import writes through; exit 2 listing every missing setting."""
    try:
        settings = Settings.from_env()
    except ConfigurationError as problems:
        hint = "" if local else (
            "\n(against the local stack: add --local, which reads what `make run` wrote)"
        )
        print(f"import-legacy: the configuration is incomplete:\n{problems}{hint}", file=sys.stderr)
        raise SystemExit(2) from None
    return Services(settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Import legacy API keys (JSON Lines).")
    parser.add_argument("file", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="validate only; write nothing")
    parser.add_argument(
        "--local", nargs="?", type=Path, const=CONNECTION_FILE, metavar="FILE",
        help="into the running local stack (default FILE: .local/connection.env)",
    )
    args = parser.parse_args(argv)
    if args.local is not None:
        try:
            connection = read_connection(args.local)
        except NoRunningStack as missing:
            parser.error(str(missing))
        os.environ.update(service_environment(connection))
        print(f"into the local stack at {connection['MEMORY_ENDPOINT']}", flush=True)
    services = connect(local=args.local is not None)
    total = Outcome()
    lines = args.file.read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            legacy = parse_line(line)
            outcome = import_keys(services, [legacy], dry_run=args.dry_run)
        except InvalidLine as problem:
            # The line number, never the line: it may hold a plaintext key.
            print(f"line {number}: {problem}", file=sys.stderr)
            total.failed += 1
            continue
        total.imported += outcome.imported
        total.skipped += outcome.skipped
        if number % 100 == 0:
            print(f"… {number}/{len(lines)} lines", flush=True)
    verb = "would import" if args.dry_run else "imported"
    print(
        f"{verb} {total.imported}, skipped {total.skipped} (already present), failed {total.failed}"
    )
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main())
