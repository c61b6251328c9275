"""Writes the OpenAPI document (what GET /openapi.json serves) to a file, for
`openapi-spec-validator` in `make lint` and for client generators.

    python -m tools.openapi [build/openapi.json] [--server https://auth.example.com]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from chalicelib.api.openapi import document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=Path("build/openapi.json"))
    parser.add_argument("--server", default=None, help="the servers[0] URL to write")
    args = parser.parse_args(argv)
    args.path.parent.mkdir(parents=True, exist_ok=True)
    args.path.write_text(json.dumps(document(args.server), indent=2) + "\n")
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
