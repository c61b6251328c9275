"""The local stand-in for API Gateway's HTTP side: chalice local's request handler, made to
behave as the deployed API does where a client can tell the difference.

- A repeated header reaches the app as API Gateway hands it over: one copy (the last) in the
  event's `headers`, every copy in `multiValueHeaders` (chalice local keeps the first only),
  so the app refuses two `Authorization` headers here as it does in AWS.
- An unknown route is answered without chalice local's imitation of API Gateway's 403, which
  encodes the `Authorization` header as ASCII (a non-ASCII byte dropped the connection) and
  echoes it into the body; `unknown_route` answers it instead.
- A `HEAD` answer and a 204 carry no body (RFC 9110): a keep-alive client would read a stray
  body as the start of the next answer. A 204 carries no `Content-Type` either.
- A method the app has no route for (TRACE too) is its 405 with `Allow`, not a 501 page.
- No log line prints a query string: a credential sent in the URL by mistake must not land
  in a log.
"""

from __future__ import annotations

import re
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from chalice.local import (
    ChaliceRequestHandler,
    LambdaEventConverter,
    LocalGateway,
    RouteMatcher,
)

NO_BODY_STATUSES = (204, 304)
_QUERY = re.compile(r"\?[^\s\"']*")


class RequestHeaders(dict[str, str]):
    """The request's headers, one value per name (the last), with every copy kept aside."""

    def __init__(self) -> None:
        super().__init__()
        self.copies: dict[str, list[str]] = {}


class EventConverter(LambdaEventConverter):
    def create_lambda_event(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None = None
    ) -> dict[str, Any]:
        event: dict[str, Any] = super().create_lambda_event(method, path, headers, body)
        copies = getattr(headers, "copies", None)
        event["multiValueHeaders"] = copies or {name: [v] for name, v in headers.items()}
        return event


def without_query(text: str) -> str:
    return _QUERY.sub("", text)


class LocalApiGatewayHandler(ChaliceRequestHandler):
    # The status line and headers go in one write and the body in another; with Nagle's
    # algorithm on, the body then waited for the client's delayed ACK of the headers: 40 ms
    # on every answer over a kept-alive connection (measured: a 404 took 44 ms).
    disable_nagle_algorithm = True

    def __init__(
        self,
        request: bytes,
        client_address: tuple[str, int],
        server: HTTPServer,
        app_object: Any,
        config: Any,
    ) -> None:
        # As ChaliceRequestHandler.__init__, with our event converter: the base class
        # handles the request inside its constructor, so it must be in place before.
        self.local_gateway = LocalGateway(app_object, config)
        self.local_gateway.event_converter = EventConverter(
            RouteMatcher(list(app_object.routes)), app_object.api.binary_types
        )
        self._routes = RouteMatcher(list(app_object.routes))
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)  # type: ignore[arg-type]

    def _parse_payload(self) -> tuple[dict[str, str], bytes | None]:
        _, body = super()._parse_payload()
        headers = RequestHeaders()
        for name, value in self.headers.items():  # every copy, in the order sent
            headers[name] = value
            headers.copies.setdefault(name, []).append(value)
        return headers, body

    def _generic_handle(self) -> None:
        try:
            self._routes.match_route(self.path)
        except ValueError:
            self._parse_payload()  # read the body off the connection before answering
            self.unknown_route()
            return
        super()._generic_handle()

    # The base class binds its own _generic_handle to each do_<METHOD>; bind ours instead.
    # TRACE, CONNECT and QUERY too: the app answers them 405 with Allow (http.server's own answer to
    # a method it has no handler for is a 501 HTML page).
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle
    do_TRACE = do_CONNECT = do_QUERY = _generic_handle

    def unknown_route(self) -> None:
        """The answer to a path no route matches (subclasses answer as the gateway does)."""
        self._send_http_response(404, {"Content-Type": "text/plain"}, "Not Found")

    def _send_http_response(
        self, code: int, headers: dict[str, Any], body: str | bytes | None
    ) -> None:
        if self.command == "HEAD" or code in NO_BODY_STATUSES:
            self.send_response(code)
            for name in ("Content-Type", "Content-Length"):
                headers.pop(name, None)
            if code not in NO_BODY_STATUSES:
                length = len(body.encode() if isinstance(body, str) else body or b"")
                headers["Content-Length"] = str(length)  # what a GET would have carried
            self._send_headers(headers)
            return
        super()._send_http_response(code, headers, body)

    def log_message(self, format: str, *args: Any) -> None:
        cleaned = tuple(without_query(a) if isinstance(a, str) else a for a in args)
        super().log_message(format, *cleaned)
