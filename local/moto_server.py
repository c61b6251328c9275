"""moto's server, single-threaded.

moto's DynamoDB backend is not thread-safe: under its default threaded server, concurrent
conditional writes on one item can both succeed (see shared/notes/field-notes.md). Real
DynamoDB is atomic per item, and our rotation race depends on that, so the local stack
serves moto one request at a time.

    python -m local.moto_server --port 5000
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    create_backend_app,
)
from moto.server import MotoRequestHandler
from werkzeug.serving import make_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(
        args.host, args.port, app, threaded=False, request_handler=MotoRequestHandler
    )
    print(f"moto listening on http://{args.host}:{server.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
