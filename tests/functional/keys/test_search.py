"""`GET /v1/auth/api-keys?q=`: the caller's keys whose label contains the search, paged like
the list, read from the caller's own partition with a bounded number of reads."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from chalicelib.clock import FrozenClock
from chalicelib.keys.service import SEARCH_READS
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"


def keys_made(
    api: Api, token: str, clock: FrozenClock, labels: list[str], **fields: Any
) -> list[str]:
    """The ids of keys made with `labels`, a second apart (newest first in the list)."""
    made = []
    for label in labels:
        made.append(api.create_key(token, label=label, **fields)["id"])
        clock.advance(seconds=1)
    return made


def search(api: Api, token: str, q: str, extra: str = "", **call: Any) -> dict[str, Any]:
    answer = api.call("GET", f"{KEYS}?q={quote(q)}{extra}", token, **call)
    assert answer.status == 200, answer.body
    return dict(answer.json)


def test_search_finds_a_key_on_the_third_page_of_a_120_key_owner(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    made = keys_made(api, alice, clock, [f"bulk key {n:02d}" for n in range(1, 121)])
    plain = api.call("GET", f"{KEYS}?limit=50", alice).json
    assert made[0] not in [k["id"] for k in plain["keys"]]  # "bulk key 01" is not on page 1

    found = search(api, alice, "bulk key 01")

    assert [k["label"] for k in found["keys"]] == ["bulk key 01"]
    assert found["keys"][0]["id"] == made[0]
    assert found["nextCursor"] is None


def test_search_ignores_case_and_surrounding_spaces(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    made = keys_made(api, alice, clock, ["CI Deploys", "staging", "ci-nightly"])

    found = search(api, alice, "  ci ")

    assert [k["id"] for k in found["keys"]] == [made[2], made[0]]
    assert [k["id"] for k in search(api, alice, "Ci d")["keys"]] == [made[0]]


@pytest.mark.parametrize(
    ("label", "q"),
    [
        ("Ångström probe", "ångström"),  # precomposed Å, case folded
        ("Ångström probe", "A\u030angstro\u0308m"),  # the same letters, decomposed
        ("Straße", "STRASSE"),  # full case folding: ß is ss
        ("ΣΊΣΥΦΟΣ", "σίσυφος"),  # final sigma
        ("پریسا نیک\u200cنام", "نیک\u200cنام"),  # Persian with a zero-width non-joiner
        ("Hal 👩\u200d💻 agent", "👩\u200d💻"),  # a joined emoji
        ("ﬁle sync", "FILE"),  # a compatibility ligature
    ],
)
def test_search_matches_non_ascii_labels_caselessly(
    api: Api, alice: str, clock: FrozenClock, label: str, q: str
) -> None:
    made = keys_made(api, alice, clock, [label, "other"])

    found = search(api, alice, q)

    assert [k["id"] for k in found["keys"]] == [made[0]]


def test_search_with_no_match_is_an_empty_last_page(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    keys_made(api, alice, clock, ["alpha", "beta"])

    found = search(api, alice, "gamma")

    assert found == {"keys": [], "nextCursor": None}


def test_an_empty_or_blank_search_lists_every_key(api: Api, alice: str, clock: FrozenClock) -> None:
    made = keys_made(api, alice, clock, ["alpha", "beta"])

    for q in ("", "   "):
        assert [k["id"] for k in search(api, alice, q)["keys"]] == made[::-1]


def test_search_combines_with_status(api: Api, alice: str, clock: FrozenClock) -> None:
    kept, gone, _ = keys_made(api, alice, clock, ["deploy one", "deploy two", "other"])
    api.call("DELETE", f"{KEYS}/{gone}", alice)

    active = search(api, alice, "deploy", "&status=active")
    revoked = search(api, alice, "deploy", "&status=revoked")

    assert [k["id"] for k in active["keys"]] == [kept]
    assert [k["id"] for k in revoked["keys"]] == [gone]


def test_search_combines_with_the_workspace(api: Api, alice: str, clock: FrozenClock) -> None:
    ws1, ws2 = api.workspace(alice, "one"), api.workspace(alice, "two")
    [in_one] = keys_made(api, alice, clock, ["agent"], category="workspace", workspaceId=ws1)
    keys_made(api, alice, clock, ["agent"], category="workspace", workspaceId=ws2)
    keys_made(api, alice, clock, ["agent"])

    by_header = search(api, alice, "AGENT", workspace=ws1)
    by_query = search(api, alice, "AGENT", f"&workspace_id={ws1}")

    assert [k["id"] for k in by_header["keys"]] == [in_one]
    assert by_query == by_header


def test_search_pages_with_a_cursor(api: Api, alice: str, clock: FrozenClock) -> None:
    labels = [f"{'match' if n % 2 else 'skip'} {n}" for n in range(10)]
    made = keys_made(api, alice, clock, labels)
    matching = [key_id for key_id, label in zip(made, labels, strict=True) if "match" in label]

    first = search(api, alice, "match", "&limit=2")
    second = search(api, alice, "match", f"&limit=2&cursor={first['nextCursor']}")
    third = search(api, alice, "match", f"&limit=2&cursor={second['nextCursor']}")

    newest_first = matching[::-1]
    assert [k["id"] for k in first["keys"]] == newest_first[:2]
    assert [k["id"] for k in second["keys"]] == newest_first[2:4]
    assert [k["id"] for k in third["keys"]] == newest_first[4:]
    assert third["nextCursor"] is None


def test_search_reads_a_bounded_number_of_pages_then_goes_on_by_its_cursor(
    api: Api, alice: str, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bound (SEARCH_READS pages of 100 keys) made 1 here: 101 keys stand for 1,001.
    assert SEARCH_READS == 10
    monkeypatch.setattr("chalicelib.keys.service.SEARCH_READS", 1)
    older = keys_made(api, alice, clock, ["needle"])
    keys_made(api, alice, clock, [f"hay {n}" for n in range(100)])
    queries: list[dict[str, Any]] = []
    api.services.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.Query", lambda params, **_: queries.append(params)
    )

    first = search(api, alice, "needle")
    reads = len(queries)
    second = search(api, alice, "needle", f"&cursor={first['nextCursor']}")

    assert reads == 1
    assert first["keys"] == []
    assert first["nextCursor"] is not None
    assert [k["id"] for k in second["keys"]] == older
    assert second["nextCursor"] is None


def test_search_never_finds_another_users_keys(
    api: Api, alice: str, bob: str, clock: FrozenClock
) -> None:
    keys_made(api, bob, clock, ["shared words"])
    mine = keys_made(api, alice, clock, ["shared words"])

    assert [k["id"] for k in search(api, alice, "shared")["keys"]] == mine
    assert [k["id"] for k in search(api, alice, "words", "&status=active")["keys"]] == mine


@pytest.mark.parametrize(
    "q",
    ["x" * 101, "a\u0000b", "tab\there", "new\nline", "\u202eevil", "del\u007f"],
)
def test_a_bad_search_is_400_invalid_parameter_naming_q(api: Api, alice: str, q: str) -> None:
    answer = api.call("GET", f"{KEYS}?q={quote(q)}", alice)

    assert answer.status == 400
    assert answer.code == "invalid_parameter"
    assert "q query parameter" in answer.json["detail"]


def test_a_search_of_100_characters_is_accepted(api: Api, alice: str) -> None:
    answer = api.call("GET", f"{KEYS}?q={'x' * 100}", alice)

    assert answer.status == 200
    assert answer.json == {"keys": [], "nextCursor": None}
