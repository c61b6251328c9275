"""The table layer's shapes: expressions named and valued for the stores, a query read page by
page only as far as it is consumed, and a write whose condition decides."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib import items
from chalicelib.errors import DependencyUnavailable
from chalicelib.table import (
    EXISTS,
    delete,
    expressions,
    newest_page,
    put,
    query,
    under,
    update,
    write_once,
)

TABLE = "memory-auth-test"


def test_every_placeholder_of_the_expressions_is_named_once_after_its_attribute() -> None:
    member = update(
        TABLE,
        items.refresh_token("d"),
        "SET #usedAt = :now, #replacedBy = :next",
        f"{EXISTS} AND attribute_not_exists(#usedAt)",
        {"now": "2026-01-01T00:00:00Z", "next": "e"},
    )

    request = member["Update"]
    assert request["ExpressionAttributeNames"] == {
        "#usedAt": "usedAt",
        "#replacedBy": "replacedBy",
        "#pk": "pk",
    }
    assert request["ExpressionAttributeValues"] == {
        ":now": {"S": "2026-01-01T00:00:00Z"},
        ":next": {"S": "e"},
    }


def test_values_are_marshalled_as_items_are() -> None:
    request = expressions(
        {"UpdateExpression": "SET #ttl = :ttl, #cidrs = :cidrs, #on = :on"},
        {"ttl": 1_790_000_000, "cidrs": ["10.0.0.0/8"], "on": True},
    )

    assert request["ExpressionAttributeValues"] == {
        ":ttl": {"N": "1790000000"},
        ":cidrs": {"L": [{"S": "10.0.0.0/8"}]},
        ":on": {"BOOL": True},
    }


def test_a_write_without_placeholders_carries_no_empty_dictionaries() -> None:
    # DynamoDB refuses an empty ExpressionAttributeNames or ExpressionAttributeValues.
    member = put(TABLE, {"pk": {"S": "p"}, "sk": {"S": "s"}})

    assert member == {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "p"}, "sk": {"S": "s"}}}}


def test_the_projection_and_key_condition_are_named_too() -> None:
    request = expressions(
        {"KeyConditionExpression": "#pk = :pk", "ProjectionExpression": "#pk, keyId, #ttl"},
        {"pk": "USER#u"},
    )

    assert request["ExpressionAttributeNames"] == {"#pk": "pk", "#ttl": "ttl"}


def test_members_are_the_transaction_shapes_dynamodb_takes() -> None:
    gone = delete(TABLE, items.member("ws_1", "usr_a"), EXISTS)

    assert gone == {
        "Delete": {
            "TableName": TABLE,
            "Key": {"pk": {"S": "WS#ws_1"}, "sk": {"S": "MEMBER#usr_a"}},
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
    }


class PagedTable:
    """Answers Query with fixed pages, `LastEvaluatedKey` on every page but the last."""

    def __init__(self, pages: list[list[str]]) -> None:
        self.pages = pages
        self.requests: list[dict[str, Any]] = []

    def query(self, **request: Any) -> dict[str, Any]:
        self.requests.append(dict(request))
        number = len(self.requests) - 1
        answer: dict[str, Any] = {
            "Items": [{"pk": {"S": "P"}, "sk": {"S": sk}} for sk in self.pages[number]]
        }
        if number + 1 < len(self.pages):
            answer["LastEvaluatedKey"] = {"pk": {"S": "P"}, "sk": {"S": self.pages[number][-1]}}
        return answer


def test_a_query_reads_every_page_from_where_the_last_one_ended() -> None:
    client = PagedTable([["a", "b"], ["c"]])

    found = list(query(client, TABLE, "#pk = :pk", {"pk": "P"}, index="Notices"))

    assert [f["sk"] for f in found] == ["a", "b", "c"]
    assert "ExclusiveStartKey" not in client.requests[0]
    assert client.requests[1]["ExclusiveStartKey"] == {"pk": {"S": "P"}, "sk": {"S": "b"}}
    assert client.requests[0]["IndexName"] == "Notices"


def test_a_filtered_page_asks_for_no_page_past_the_one_that_filled_it() -> None:
    client = PagedTable([["KEY#1", "KEY#2"], ["KEY#3", "KEY#4"], ["KEY#5"]])

    found = newest_page(
        client,
        TABLE,
        "P",
        "KEY#",
        read=lambda values: values,
        keep=lambda values: values["sk"] != "KEY#2",
        limit=2,
        start=None,
    )

    assert [f["sk"] for f in found] == ["KEY#1", "KEY#3"]
    assert len(client.requests) == 2
    first = client.requests[0]
    assert first["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :prefix)"
    assert first["ExpressionAttributeValues"] == {":pk": {"S": "P"}, ":prefix": {"S": "KEY#"}}
    read_as = (first["ConsistentRead"], first["ScanIndexForward"], first["Limit"])
    assert read_as == (True, False, 100)


def test_a_page_starts_after_the_cursors_item() -> None:
    client = PagedTable([["KEY#3"]])
    start = items.api_key("usr_a", "2")

    list(under(client, TABLE, "USER#usr_a", "KEY#", start=start))

    assert client.requests[0]["ExclusiveStartKey"] == start
    assert "ConsistentRead" not in client.requests[0]


def failing(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}}, "UpdateItem")


class OneWrite:
    def __init__(self, error: ClientError | None = None) -> None:
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def update_item(self, **request: Any) -> dict[str, Any]:
        self.calls.append(request)
        if self.error is not None:
            raise self.error
        return {}


@pytest.mark.parametrize(
    ("error", "won"),
    [(None, True), (failing("ConditionalCheckFailedException"), False)],
    ids=["condition held", "condition failed"],
)
def test_a_write_once_says_whether_its_condition_held(
    error: ClientError | None, won: bool
) -> None:
    client = OneWrite(error)
    spent = update(TABLE, items.oauth_code("d"), "SET #usedAt = :now", EXISTS, {"now": "t"})

    answer = write_once(client, spent)

    assert answer is won
    assert client.calls == [spent["Update"]]


def test_a_write_once_is_sent_twice_then_fails_closed_when_dynamodb_does() -> None:
    client = OneWrite(failing("InternalServerError"))
    spent = update(TABLE, items.oauth_code("d"), "SET #usedAt = :now", EXISTS, {"now": "t"})

    with pytest.raises(DependencyUnavailable):
        write_once(client, spent)

    assert len(client.calls) == 2  # a failed send may not have been applied: once more


def test_a_lists_page_is_newest_first_strongly_consistent_and_read_as_asked() -> None:
    client = PagedTable([["KEY#9", "KEY#8"], ["KEY#7"]])

    found = newest_page(
        client, TABLE, "USER#usr_a", "KEY#", read=lambda values: values["sk"][4:],
        keep=lambda key_id: key_id != "8", limit=5, start=items.api_key("usr_a", "10"),
    )

    assert found == ["9", "7"]
    first = client.requests[0]
    assert (first["ConsistentRead"], first["ScanIndexForward"]) == (True, False)
    assert first["Limit"] == 100
    assert first["ExclusiveStartKey"] == items.api_key("usr_a", "10")
