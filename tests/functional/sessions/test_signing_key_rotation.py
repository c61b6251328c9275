"""Signing-key rotation: the README's runbook, step by step, on moto.

Configuration names the current KMS signing key and optionally the previous one. The JWKS
lists both; tokens signed by either verify; once the previous key is dropped, its tokens
stop verifying.
"""

from __future__ import annotations

import copy

import jwt

from chalicelib import runtime
from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.oauth import exchange, trust
from tests.oidc_issuer import FakeIssuer


def redeploy(api: Api, current: str, previous: str | None) -> Services:
    """What a deployment with new TOKEN_(PREVIOUS_)SIGNING_KEY_ID does: fresh containers."""
    settings = copy.replace(
        api.services.settings, signing_key_id=current, previous_signing_key_id=previous
    )
    fresh = Services(settings, api.services.clock)
    runtime.use(fresh)
    return fresh


def whoami(api: Api, token: str) -> int:
    return api.call("GET", "/v1/auth/whoami", token).status


def test_rotation_publishes_both_keys_and_accepts_tokens_of_either(api: Api) -> None:
    idp = FakeIssuer()
    trust(api.services, idp)
    old_token = exchange(api, idp.id_token()).json["access_token"]
    old_key = api.services.settings.signing_key_id
    new_key = api.services.kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")

    # Step 1: sign with the new key, keep publishing the old one.
    during = redeploy(api, current=new_key["KeyMetadata"]["Arn"], previous=old_key)
    trust(during, idp)
    new_token = exchange(api, idp.id_token()).json["access_token"]
    jwks = api.call("GET", "/.well-known/jwks.json")
    kids = [key["kid"] for key in jwks.json["keys"]]

    assert kids == [jwt.get_unverified_header(t)["kid"] for t in (new_token, old_token)]
    assert jwks.headers["Cache-Control"] == "public, max-age=300"
    assert whoami(api, old_token) == 200
    assert whoami(api, new_token) == 200

    # Step 2, an hour (one token lifetime) later: drop the previous key.
    redeploy(api, current=new_key["KeyMetadata"]["Arn"], previous=None)
    assert [key["kid"] for key in api.call("GET", "/.well-known/jwks.json").json["keys"]] == [
        kids[0]
    ]
    assert whoami(api, new_token) == 200
    assert whoami(api, old_token) == 401
