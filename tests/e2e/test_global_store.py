"""`make run`'s store behaves like a replica of the global stage's table (multi-Region
strong consistency): it refuses transactions with DynamoDB's error, and the service, which
sends none, works on it (every other e2e test runs on this store too)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from infra.template import stage_environment
from tests.e2e.conftest import Stack


def dynamodb(stack: Stack) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=stack.info["motoEndpoint"], region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",  # moto's own
    )


def test_the_local_store_refuses_transact_write_items_as_a_global_table_does(
    stack: Stack,
) -> None:
    table = stage_environment("dev")["AUTH_TABLE"]
    client = dynamodb(stack)
    put = {"Put": {"TableName": table, "Item": {"pk": {"S": "E2E"}, "sk": {"S": "TX"}}}}

    with pytest.raises(ClientError) as refused:
        client.transact_write_items(TransactItems=[put])
    with pytest.raises(ClientError) as refused_read:
        client.transact_get_items(
            TransactItems=[{"Get": {"TableName": table, "Key": put["Put"]["Item"]}}]
        )

    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "multi-Region strong consistency" in refused.value.response["Error"]["Message"]
    assert refused_read.value.response["Error"]["Code"] == "ValidationException"
    assert "Item" not in client.get_item(
        TableName=table, Key=put["Put"]["Item"]
    )


def test_keys_are_created_rotated_and_revoked_on_the_refusing_store(stack: Stack) -> None:
    token = stack.mint_token("usr_e2e_global")
    created = stack.call("POST", "/v1/auth/api-keys", token, body={"label": "g"})
    assert created.status_code == 201
    rotated = stack.call("POST", f"/v1/auth/api-keys/{created.json()['id']}/rotate", token)
    assert rotated.status_code == 201
    assert stack.call("GET", "/v1/auth/whoami", rotated.json()["key"]).status_code == 200
    successor = rotated.json()
    assert stack.call("DELETE", f"/v1/auth/api-keys/{successor['id']}", token).status_code == 204
    assert stack.call("GET", "/v1/auth/whoami", successor["key"]).status_code == 401
