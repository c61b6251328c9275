"""The identity headers, read in one place for the routes and the data-plane authorizer."""

from __future__ import annotations

from typing import Any

from chalicelib.access.headers import Sent, identity_headers


def event(headers: dict[str, str] | None, multi: dict[str, list[str]] | None) -> dict[str, Any]:
    return {"headers": headers, "multiValueHeaders": multi}


def test_names_match_without_regard_to_case() -> None:
    found = identity_headers(event({"AUTHORIZATION": "Bearer a", "x-WORKSPACE-id": "ws_a"}, None))

    assert (found.authorization, found.workspace) == (Sent("Bearer a", 1), Sent("ws_a", 1))


def test_every_copy_api_gateway_kept_counts_and_none_is_taken() -> None:
    multi = {"Authorization": ["Bearer a"], "authorization": ["Bearer b"], "X-Workspace-Id": []}

    found = identity_headers(event({"Authorization": "Bearer b"}, multi))

    assert found.authorization == Sent(None, 2)
    assert found.workspace == Sent(None, 0)


def test_without_multi_value_headers_the_headers_are_read() -> None:
    found = identity_headers(event({"authorization": "Bearer a"}, None))

    assert found.authorization == Sent("Bearer a", 1)
    assert found.workspace == Sent(None, 0)


def test_no_headers_at_all_is_nothing_sent() -> None:
    found = identity_headers(event(None, None))

    assert (found.authorization, found.workspace) == (Sent(), Sent())


def test_the_routes_and_the_authorizer_read_them_through_this_one_function() -> None:
    from pathlib import Path

    from chalicelib.api import edge
    from chalicelib.decisions import authorizer

    for module in (edge, authorizer):
        source = Path(str(module.__file__)).read_text()
        assert "identity_headers(" in source
        assert "multiValueHeaders" not in source
