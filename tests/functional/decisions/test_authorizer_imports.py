"""The authorizer's cold-start path, in a fresh interpreter as Lambda starts it.

Lambda imports `app` with `_HANDLER=app.authorizer`; an API-key decision must then load
no route and none of the packages of tests/fixtures/authorizer_path.py (Chalice, Powertools,
PyJWT, cryptography, pydantic), which `make bench` checks too. DynamoDB is a botocore
`Stubber` here, so nothing but the code under test is imported. (Timing is `make bench`'s
business, never a test's.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

from infra.template import PROJECT_DIR, stage_environment
from local.stack import LOCAL_CREDENTIALS
from tests.fixtures.authorizer_path import NOT_ON_THE_AUTHORIZER_PATH

CHILD = textwrap.dedent(
    """
    import gc, json, sys

    import app
    frozen = gc.get_freeze_count()
    from botocore.stub import Stubber

    from chalicelib.ids import new_workspace_id
    from chalicelib.keys.plaintext import generate_key
    from chalicelib.hashing import hash_secret
    from chalicelib.keys.store import KeyStore
    from chalicelib.keys.model import KEY_LIFETIME, ApiKey
    from chalicelib.runtime import services
    from tests.fixtures.events import bearer, request_event

    HEAVY = tuple(sys.argv[1:])  # tests/fixtures/authorizer_path.py
    # Our modules that a decision does not need, kept off the authorizer's cold start.
    DEFERRED = ("chalicelib.keys.page", "chalicelib.keys.notice", "chalicelib.workspaces.model")

    def loaded(packages):
        return sorted(m for m in sys.modules for p in packages if m == p or m.startswith(p + "."))

    # No Chalice app at all in the authorizer's function: only the other functions build one.
    routes = len(app.app.routes) if hasattr(app, "app") else 0
    api_modules = sorted(m for m in sys.modules if m.startswith("chalicelib.api"))
    svc = services()
    now = svc.clock.now()
    workspace_id = new_workspace_id(now)
    plaintext = generate_key("usr_alice", workspace_id)  # located: key and membership, one read
    api_key = ApiKey(
        id="key_01", owner_id="usr_alice", label="cold", category="workspace",
        workspace_id=workspace_id, scopes=("memory",), key_hash=hash_secret(plaintext),
        created_at=now, expires_at=now + KEY_LIFETIME,
        last_used_at=now,  # used in this 5-minute window already: no lastUsedAt write
    )
    credential = KeyStore(None, svc.settings.table_name)._credential_item(api_key)
    membership = {"pk": {"S": "WS#" + workspace_id}, "sk": {"S": "MEMBER#usr_alice"}}
    stubber = Stubber(svc.dynamodb)
    table = svc.settings.table_name
    stubber.add_response("batch_get_item", {"Responses": {table: [membership, credential]}})
    with stubber:
        answer = app.authorizer(request_event(authorization=bearer(plaintext)), None)
    after_key = loaded(HEAVY)
    deferred_after_key = loaded(DEFERRED)
    strptime_after_key = "_strptime" in sys.modules
    not_a_token = "e" + "yJhbGciOi." + "e" + "yJzdWIi.c2ln"  # JWT-shaped, so the JWT path runs
    try:
        app.authorizer(request_event(authorization=bearer(not_a_token)), None)
        jwt_answer = "answered"
    except Exception as error:
        jwt_answer = str(error)
    print(json.dumps({
        "routes": routes,
        "frozen": frozen,
        "api_modules": api_modules,
        "sweep_handler": callable(getattr(app, "expiry_sweep", None)),
        "effect": answer["policyDocument"]["Statement"][0]["Effect"],
        "loaded_after_api_key": after_key,
        "deferred_loaded_after_api_key": deferred_after_key,
        "strptime_loaded_after_api_key": strptime_after_key,
        "jwt_answer": jwt_answer,
        "jwt_loaded_after_jwt": "jwt" in sys.modules,
    }))
    """
)


def run_child(extra_env: dict[str, str]) -> dict[str, Any]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "_HANDLER", "PYTEST"))
    }
    env.update(stage_environment("dev"))
    env.update(LOCAL_CREDENTIALS)
    # Anything the stubs do not answer goes to a closed loopback port, never to AWS.
    env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
    env.update({"TOKEN_ISSUER": "https://auth.test.example", **extra_env})
    result = subprocess.run(
        [sys.executable, "-c", CHILD, *NOT_ON_THE_AUTHORIZER_PATH],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_api_key_decision_in_the_authorizers_lambda_loads_only_the_api_key_path() -> None:
    child = run_child({"_HANDLER": "app.authorizer"})
    assert child["routes"] == 0
    assert child["api_modules"] == []
    assert child["sweep_handler"] is False
    assert child["effect"] == "Allow"
    assert child["loaded_after_api_key"] == []


def test_api_key_decision_does_not_load_key_listings_expiry_notices_or_workspace_records() -> None:
    # A key page, an expiry notice, a workspace and a member: dataclasses built at import,
    # which the API's listings and the hourly sweep need and a decision does not.
    child = run_child({"_HANDLER": "app.authorizer"})

    assert child["effect"] == "Allow"
    assert child["deferred_loaded_after_api_key"] == []


def test_api_key_decision_parses_the_keys_dates_without_loading_strptime() -> None:
    # datetime.strptime's first call imports _strptime and compiles its locale's patterns.
    child = run_child({"_HANDLER": "app.authorizer"})

    assert child["effect"] == "Allow"
    assert child["strptime_loaded_after_api_key"] is False


def test_jwt_path_loads_pyjwt_only_once_a_jwt_arrives() -> None:
    child = run_child({"_HANDLER": "app.authorizer"})
    assert "jwt" not in child["loaded_after_api_key"]
    assert child["jwt_answer"] == "Unauthorized"
    assert child["jwt_loaded_after_jwt"] is True


def test_the_api_lambda_still_loads_every_route() -> None:
    child = run_child({"_HANDLER": "app.app"})
    assert child["routes"] > 0
    assert child["effect"] == "Allow"


def test_the_sweeps_lambda_has_its_handler_and_no_routes() -> None:
    child = run_child({"_HANDLER": "app.expiry_sweep"})
    assert child["sweep_handler"] is True
    assert child["routes"] == 0
    assert child["effect"] == "Allow"


def test_a_lambda_functions_init_is_frozen_out_of_garbage_collection() -> None:
    # What the init imported lives as long as the container: no collection walks it again.
    in_lambda = run_child({"_HANDLER": "app.authorizer"})
    elsewhere = run_child({})  # the local stack and the tests: nothing frozen

    assert in_lambda["frozen"] > 10_000
    assert elsewhere["frozen"] == 0
