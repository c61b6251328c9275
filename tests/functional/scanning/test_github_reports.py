"""`POST /v1/auth/secret-scanning/github`: GitHub's signed leaked-key reports, verified with
the published keys (the local stand-in, served over loopback HTTP), revoke what they name."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.runtime import Services
from chalicelib.scanning.github import PublishedKeys, fetch_key_list
from local.scan_report import foreign_signature, report_body
from local.secret_scanning import DevSecretScanningServer
from tests.functional.conftest import Answer, Api

PATH = "/v1/auth/secret-scanning/github"
KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
LEAK_URL = "https://github.com/octo/app/blob/0123abc/settings.py"


@pytest.fixture
def github(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DevSecretScanningServer]:
    """GitHub's published keys and signer, on loopback; the service fetches the list from it."""
    monkeypatch.setenv("LOCAL_MODE", "1")
    server = DevSecretScanningServer("127.0.0.1", 0).start()
    url = server.keys_url
    vars(services)["github_keys"] = PublishedKeys(lambda: fetch_key_list(url, local_mode=True))
    try:
        yield server
    finally:
        server.stop()


def report(
    api: Api, github: DevSecretScanningServer, *tokens: str, tamper: str = "none"
) -> Answer:
    body = report_body(list(tokens), LEAK_URL)
    signature = github.signer.sign(body)
    headers = {
        "Github-Public-Key-Identifier": github.signer.key_identifier,
        "Github-Public-Key-Signature": signature,
        "User-Agent": "GitHub-Hookshot/test",
    }
    if tamper == "unsigned":
        del headers["Github-Public-Key-Identifier"], headers["Github-Public-Key-Signature"]
    if tamper == "wrong-signature":
        headers["Github-Public-Key-Signature"] = foreign_signature(body)
    if tamper == "other-body":
        body = report_body(list(tokens), LEAK_URL + "#replayed")
    if tamper == "unknown-key":
        headers["Github-Public-Key-Identifier"] = "0" * 64
    if tamper == "not-base64":
        headers["Github-Public-Key-Signature"] = "%%%"
    return api.call("POST", PATH, raw=body, headers=headers)


def sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_a_signed_report_revokes_the_key_on_the_very_next_request(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)
    assert api.call("GET", WHOAMI, key["key"]).status == 200

    answer = report(api, github, key["key"])

    assert answer.status == 200
    assert answer.json == [
        {"token_hash": sha256(key["key"]), "token_type": "memory_auth_api_key",
         "label": "true_positive"}
    ]
    assert key["key"] not in answer.body.decode()
    assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"
    assert api.call("GET", f"{KEYS}/{key['id']}", alice).json["status"] == "revoked"


def test_the_leak_is_an_event_with_the_reports_url_and_source(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)

    report(api, github, key["key"])

    events = api.call("GET", f"/v1/auth/events?keyId={key['id']}", alice).json["events"]
    assert [e["type"] for e in events] == ["key.leaked", "key.created"]
    leaked = events[0]
    assert leaked["actor"] == {"system": "github-secret-scanning"}
    assert leaked["data"] == {
        "url": LEAK_URL, "source": "content", "tokenType": "memory_auth_api_key"
    }
    assert leaked["sourceIp"] == "127.0.0.1"
    assert leaked["userAgent"] == "GitHub-Hookshot/test"
    assert key["key"] not in json.dumps(events)


def test_a_key_in_its_grace_is_revoked_at_once(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)
    api.call("POST", f"{KEYS}/{key['id']}/rotate", alice, body={"gracePeriodSeconds": 86400})

    report(api, github, key["key"])

    assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"


@pytest.mark.parametrize(
    "tamper", ["unsigned", "wrong-signature", "other-body", "unknown-key", "not-base64"]
)
def test_a_report_that_does_not_verify_is_401_and_revokes_nothing(
    api: Api, alice: str, github: DevSecretScanningServer, tamper: str
) -> None:
    key = api.create_key(alice)

    answer = report(api, github, key["key"], tamper=tamper)

    assert (answer.status, answer.code) == (401, "invalid_signature")
    assert api.call("GET", WHOAMI, key["key"]).status == 200
    types = [e["type"] for e in api.call("GET", "/v1/auth/events", alice).json["events"]]
    assert types == ["key.created"]


def test_look_alikes_and_unknown_keys_are_false_positives_and_say_nothing_more(
    api: Api, alice: str, github: DevSecretScanningServer, services: Services
) -> None:
    from chalicelib.keys.plaintext import generate_key

    real = api.create_key(alice)["key"]
    look_alike = real[:-1] + ("A" if real[-1] != "A" else "B")  # its checksum fails
    unknown = generate_key()  # well formed, never issued
    legacy = "leg" + "acy_" + "abc123"
    reads: list[str] = []
    services.dynamodb.meta.events.register(
        "before-parameter-build.dynamodb.GetItem", lambda **_: reads.append("GetItem")
    )

    answer = report(api, github, look_alike, unknown, legacy)

    assert [a["label"] for a in answer.json] == ["false_positive"] * 3
    hashes = [sha256(t) for t in (look_alike, unknown, legacy)]
    assert [a["token_hash"] for a in answer.json] == hashes
    assert len(reads) == 1  # only the well-formed, checksum-valid token was looked up
    assert api.call("GET", WHOAMI, real).status == 200


def test_a_key_already_revoked_is_a_true_positive_without_a_second_event(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    answer = report(api, github, key["key"], key["key"])

    assert [a["label"] for a in answer.json] == ["true_positive", "true_positive"]
    types = [e["type"] for e in api.call("GET", "/v1/auth/events", alice).json["events"]]
    assert types == ["key.revoked", "key.created"]


def test_one_report_can_name_several_keys_of_several_owners(
    api: Api, alice: str, bob: str, github: DevSecretScanningServer
) -> None:
    mine, theirs = api.create_key(alice), api.create_key(bob)

    answer = report(api, github, mine["key"], theirs["key"])

    assert [a["label"] for a in answer.json] == ["true_positive", "true_positive"]
    for key in (mine, theirs):
        assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"


@pytest.mark.parametrize(
    "body", [b"{}", b"[]", b"not json", b'[{"type": "x"}]', b'[{"token": 5}]', b"[1]"]
)
def test_a_signed_but_malformed_report_is_400(
    api: Api, github: DevSecretScanningServer, body: bytes
) -> None:
    headers = {
        "Github-Public-Key-Identifier": github.signer.key_identifier,
        "Github-Public-Key-Signature": github.signer.sign(body),
    }

    answer = api.call("POST", PATH, raw=body, headers=headers)

    assert (answer.status, answer.code) == (400, "invalid_report")


def test_the_key_list_is_cached_and_refetched_for_unknown_identifiers_at_most_every_30_s(
    api: Api, alice: str, github: DevSecretScanningServer, services: Services
) -> None:
    seconds = [0.0]
    url = github.keys_url
    vars(services)["github_keys"] = PublishedKeys(
        lambda: fetch_key_list(url, local_mode=True), clock=lambda: seconds[0]
    )
    key = api.create_key(alice)

    report(api, github, key["key"])
    report(api, github, key["key"])
    served_while_known = github.signer.lists_served
    seconds[0] = 29.0
    report(api, github, key["key"], tamper="unknown-key")
    seconds[0] = 31.0
    report(api, github, key["key"], tamper="unknown-key")
    report(api, github, key["key"], tamper="unknown-key")
    seconds[0] = 3700.0
    report(api, github, key["key"])

    assert served_while_known == 1
    # One refetch for the unknown identifier once 30 s had passed, one when the hour was up.
    assert github.signer.lists_served == 3


def test_without_the_key_list_nothing_is_verified_503(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)
    github.stop()

    answer = report(api, github, key["key"])

    assert (answer.status, answer.code) == (503, "dependency_unavailable")
    assert api.call("GET", WHOAMI, key["key"]).status == 200


def test_the_route_needs_no_bearer_credential_and_ignores_one(
    api: Api, alice: str, github: DevSecretScanningServer
) -> None:
    key = api.create_key(alice)
    body = report_body([key["key"]], LEAK_URL)

    answer = api.call("POST", PATH, alice, raw=body)  # a user token is no signature

    assert (answer.status, answer.code) == (401, "invalid_signature")


def test_the_leak_event_reaches_the_bus(
    api: Api, alice: str, github: DevSecretScanningServer, services: Services
) -> None:
    import boto3

    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="leaks")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    bus = services.settings.event_bus_name
    # The README's rule: key.leaked, from memory-auth, to whoever must act on it.
    services.events_client.put_rule(
        Name="key-leaked", EventBusName=bus,
        EventPattern=json.dumps({"source": ["memory-auth"], "detail-type": ["key.leaked"]}),
    )
    services.events_client.put_targets(
        Rule="key-leaked", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}]
    )
    key = api.create_key(alice)

    report(api, github, key["key"])

    (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    detail: dict[str, Any] = json.loads(message["Body"])["detail"]
    assert (detail["type"], detail["keyId"], detail["data"]["url"]) == (
        "key.leaked", key["id"], LEAK_URL
    )
