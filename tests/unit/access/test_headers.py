"""The identity headers, read in one place for the routes and the data-plane authorizer."""

from __future__ import annotations

from typing import Any

from chalicelib.access.headers import USER_AGENT_LIMIT, Sent, identity_headers, origin
from chalicelib.access.principal import Origin


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


def seen_by_gateway(source_ip: str | None, user_agent: str | None) -> dict[str, Any]:
    identity = {"sourceIp": source_ip, "userAgent": user_agent}
    forwarded = {"X-Forwarded-For": "198.51.100.1"}  # written by the caller: not trusted
    return {"headers": forwarded, "requestContext": {"identity": identity}}


def test_the_origin_is_what_api_gateway_saw_never_a_forwarded_header() -> None:
    found = origin(seen_by_gateway("203.0.113.7", "curl/8"))

    assert found == Origin("203.0.113.7", "curl/8")


def test_a_user_agent_is_cut_to_its_limit_whoever_reads_the_origin() -> None:
    found = origin(seen_by_gateway("203.0.113.7", "a" * (USER_AGENT_LIMIT + 100)))

    assert found.user_agent == "a" * USER_AGENT_LIMIT


def test_without_an_identity_the_user_agent_header_is_read_and_cut_the_same() -> None:
    found = origin({"headers": {"User-Agent": "b" * 2000}, "requestContext": {}})

    assert found == Origin(None, "b" * USER_AGENT_LIMIT)
