"""POST /v1/auth/exchange: an OpenID Connect ID token in, our token pair out (RFC 6749 §5)."""

from __future__ import annotations

import pytest

from chalicelib.runtime import Services
from chalicelib.sessions.users import UserStore
from tests.functional.conftest import ISSUER, Answer, Api
from tests.functional.failures import broken, failing_with
from tests.functional.oauth import EXCHANGE, assert_oauth_error, exchange, form, trust
from tests.oidc_issuer import (
    FakeIssuer,
    hs256_with_public_key,
    unsigned,
    with_foreign_signature,
)

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"


def token_exchange(subject_token: str) -> dict[str, str]:
    """An RFC 8693 token-exchange request for an ID token."""
    return {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": subject_token,
        "subject_token_type": ID_TOKEN_TYPE,
    }


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


# -- the happy paths -----------------------------------------------------------------------


def test_exchange_answers_an_uncached_oauth_token_pair_in_the_rfc_9068_profile(
    api: Api, idp: FakeIssuer
) -> None:
    import jwt

    answer = exchange(api, idp.id_token())
    assert answer.status == 200
    assert set(answer.json) == {"access_token", "token_type", "expires_in", "refresh_token"}
    assert (answer.json["token_type"], answer.json["expires_in"]) == ("Bearer", 3600)
    assert answer.headers["Cache-Control"] == "no-store"
    assert answer.headers["Pragma"] == "no-cache"
    token = answer.json["access_token"]
    header = jwt.get_unverified_header(token)
    claims = api.services.verifier.verify(token)
    assert (header["alg"], header["typ"]) == ("RS256", "at+jwt")
    assert header["kid"] == api.services.signing_keys.current_kid()
    assert (claims["iss"], claims["aud"]) == (ISSUER, ISSUER)
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["sub"].startswith("usr_")
    assert claims["jti"]


def test_exchanged_access_token_calls_whoami_as_a_user(api: Api, idp: FakeIssuer) -> None:
    pair = exchange(api, idp.id_token("alice")).json
    answer = api.call("GET", "/v1/auth/whoami", pair["access_token"])
    assert answer.status == 200
    assert answer.json["userId"].startswith("usr_")
    assert answer.json["credential"] == "user_token"


def test_exchanged_user_can_manage_keys_and_workspaces(api: Api, idp: FakeIssuer) -> None:
    token = exchange(api, idp.id_token()).json["access_token"]
    workspace = api.workspace(token)
    created = api.create_key(token, category="workspace", workspaceId=workspace)
    assert api.call("GET", "/v1/auth/whoami", created["key"]).json["workspaceId"] == workspace


def user_of(api: Api, answer: Answer) -> str:
    return str(api.services.verifier.verify(answer.json["access_token"])["sub"])


def test_same_login_is_the_same_user_every_time(api: Api, idp: FakeIssuer) -> None:
    first = user_of(api, exchange(api, idp.id_token("alice")))
    second = user_of(api, exchange(api, idp.id_token("alice")))
    assert first == second


def test_another_subject_is_another_user(api: Api, idp: FakeIssuer) -> None:
    assert user_of(api, exchange(api, idp.id_token("alice"))) != user_of(
        api, exchange(api, idp.id_token("bob"))
    )


def test_same_subject_at_another_issuer_is_another_user(api: Api, services: Services) -> None:
    first, second = FakeIssuer(), FakeIssuer("https://other.example", "other-client")
    trust(services, first, second)
    assert user_of(api, exchange(api, first.id_token("1234"))) != user_of(
        api, exchange(api, second.id_token("1234"))
    )


def test_first_login_keeps_email_and_name_and_later_logins_update_them(
    api: Api, idp: FakeIssuer
) -> None:
    user_id = user_of(api, exchange(api, idp.id_token("alice", email="a@example.test")))
    exchange(api, idp.id_token("alice", email="new@example.test", name=None))
    profile = api.services.dynamodb.get_item(
        TableName=api.services.settings.table_name,
        Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": "PROFILE"}},
        ConsistentRead=True,
    )["Item"]
    assert (profile["issuer"]["S"], profile["subject"]["S"]) == (idp.issuer, "alice")
    assert (profile["email"]["S"], profile["name"]["S"]) == ("new@example.test", "Alice")


def test_rfc_8693_form_exchange_answers_the_issued_token_type(api: Api, idp: FakeIssuer) -> None:
    answer = form(api, EXCHANGE, token_exchange(idp.id_token()))
    assert answer.status == 200, answer.body
    assert answer.json["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    assert answer.json["token_type"] == "Bearer"
    assert api.call("GET", "/v1/auth/whoami", answer.json["access_token"]).status == 200


def test_rfc_8693_form_may_name_this_service_as_audience(api: Api, idp: FakeIssuer) -> None:
    fields = {**token_exchange(idp.id_token()), "audience": ISSUER}
    answer = form(api, EXCHANGE, fields)
    assert answer.status == 200, answer.body


# -- rejected ID tokens: 400 invalid_grant, never 500 -------------------------------------------

REJECTED = {
    "bad signature": lambda i: with_foreign_signature(i, i.claims()),
    "wrong issuer": lambda i: i.id_token(iss="https://evil.example"),
    "wrong audience": lambda i: i.id_token(aud="another-client"),
    "expired": lambda i: i.id_token(iat=1_700_000_000, exp=1_700_000_600),
    "unknown kid": lambda i: i.provider.sign(i.claims(), headers={"kid": "unknown"}),
    "alg none": lambda i: unsigned(i, i.claims()),
    "HS256": lambda i: hs256_with_public_key(i, i.claims()),
    "garbage": lambda i: "e" + "yJ.garbage.x",
}


@pytest.mark.parametrize("case", REJECTED, ids=list(REJECTED))
def test_unacceptable_id_token_is_invalid_grant(api: Api, idp: FakeIssuer, case: str) -> None:
    token = REJECTED[case](idp)
    answer = exchange(api, token)
    assert_oauth_error(answer, 400, "invalid_grant")
    assert token.encode() not in answer.body


@pytest.mark.parametrize("case", ["bad signature", "alg none"])
def test_unacceptable_id_token_in_the_form_is_invalid_grant(
    api: Api, idp: FakeIssuer, case: str
) -> None:
    answer = form(api, EXCHANGE, token_exchange(REJECTED[case](idp)))
    assert_oauth_error(answer, 400, "invalid_grant")


def test_rejected_exchange_creates_no_user(api: Api, idp: FakeIssuer) -> None:
    exchange(api, idp.id_token("mallory", aud="another-client"))
    assert api.services.users.find_login(idp.issuer, "mallory") is None


def test_no_trusted_issuer_configured_rejects_every_id_token(api: Api) -> None:
    answer = exchange(api, FakeIssuer().id_token())
    assert_oauth_error(answer, 400, "invalid_grant")


# -- malformed requests: invalid_request and friends ---------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b'{"id_token": 5}', b"{}", b'{"id_token": "a.b.c", "extra": 1}'],
    ids=["empty", "broken", "array", "number", "missing", "unknown field"],
)
def test_malformed_json_is_invalid_request(api: Api, idp: FakeIssuer, raw: bytes) -> None:
    answer = api.call("POST", EXCHANGE, raw=raw or b" ")
    assert_oauth_error(answer, 400, "invalid_request")


def test_deeply_nested_json_is_invalid_request_not_500(api: Api) -> None:
    raw = b'{"id_token": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert_oauth_error(api.call("POST", EXCHANGE, raw=raw), 400, "invalid_request")


def test_parameters_in_the_url_are_refused(api: Api, idp: FakeIssuer) -> None:
    answer = api.call("POST", EXCHANGE + "?id_token=x", body={"id_token": idp.id_token()})
    assert_oauth_error(answer, 400, "invalid_request")


FORM_ERRORS: dict[str, tuple[dict[str, str], str]] = {
    "no grant_type": ({"subject_token_type": ID_TOKEN_TYPE}, "invalid_request"),
    "another grant_type": (
        {"grant_type": "authorization_code", "subject_token_type": ID_TOKEN_TYPE},
        "unsupported_grant_type",
    ),
    "no subject_token_type": ({"grant_type": TOKEN_EXCHANGE}, "invalid_request"),
    "an unknown subject token type": (
        {"grant_type": TOKEN_EXCHANGE,
         "subject_token_type": "urn:ietf:params:oauth:token-type:saml2"},
        "invalid_request",
    ),
    "a refresh token requested": (
        {"grant_type": TOKEN_EXCHANGE, "subject_token_type": ID_TOKEN_TYPE,
         "requested_token_type": "urn:ietf:params:oauth:token-type:refresh_token"},
        "invalid_request",
    ),
    "delegation": (
        {"grant_type": TOKEN_EXCHANGE, "subject_token_type": ID_TOKEN_TYPE,
         "actor_token": "x", "actor_token_type": ID_TOKEN_TYPE},
        "invalid_request",
    ),
    "another audience": (
        {"grant_type": TOKEN_EXCHANGE, "subject_token_type": ID_TOKEN_TYPE,
         "audience": "https://elsewhere.example"},
        "invalid_target",
    ),
}


@pytest.mark.parametrize("case", FORM_ERRORS, ids=list(FORM_ERRORS))
def test_unservable_token_exchange_form_gets_its_rfc_error(
    api: Api, idp: FakeIssuer, case: str
) -> None:
    fields, error = FORM_ERRORS[case]
    answer = form(api, EXCHANGE, {"subject_token": idp.id_token(), **fields})
    assert_oauth_error(answer, 400, error)


def test_missing_subject_token_is_invalid_request(api: Api, idp: FakeIssuer) -> None:
    answer = form(
        api, EXCHANGE, dict(grant_type=TOKEN_EXCHANGE, subject_token_type=ID_TOKEN_TYPE),
    )
    assert_oauth_error(answer, 400, "invalid_request")


def test_repeated_form_parameter_is_invalid_request(api: Api, idp: FakeIssuer) -> None:
    fields = [("grant_type", TOKEN_EXCHANGE), ("subject_token_type", ID_TOKEN_TYPE),
              ("subject_token", idp.id_token()), ("subject_token", idp.id_token("bob"))]
    assert_oauth_error(form(api, EXCHANGE, fields), 400, "invalid_request")


def test_body_over_16_kib_is_413(api: Api, idp: FakeIssuer) -> None:
    answer = exchange(api, "x" * (16 * 1024))
    assert_oauth_error(answer, 413, "invalid_request")


# -- failed dependencies: 503, never 500, never a token -------------------------------------------


def test_unreachable_issuer_keys_are_503(api: Api, idp: FakeIssuer) -> None:
    idp.reachable = False
    answer = exchange(api, idp.id_token())
    assert_oauth_error(answer, 503, "temporarily_unavailable")


@pytest.mark.parametrize("operation", ["get_item", "put_item"])
def test_dynamodb_failure_is_503(
    api: Api, idp: FakeIssuer, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    monkeypatch.setattr(api.services.dynamodb, operation, broken)
    assert_oauth_error(exchange(api, idp.id_token()), 503, "temporarily_unavailable")


def test_kms_failure_is_503(api: Api, idp: FakeIssuer, monkeypatch: pytest.MonkeyPatch) -> None:
    api.services.signing_keys.jwks()  # public keys already cached: only Sign fails
    monkeypatch.setattr(api.services.kms, "sign", failing_with("ThrottlingException"))
    assert_oauth_error(exchange(api, idp.id_token()), 503, "temporarily_unavailable")


def test_profile_update_failure_does_not_fail_a_returning_login(
    api: Api, idp: FakeIssuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    exchange(api, idp.id_token("alice"))
    monkeypatch.setattr(api.services.dynamodb, "update_item", broken)
    assert exchange(api, idp.id_token("alice")).status == 200


# -- the first login's race ---------------------------------------------------------------------


def test_two_first_logins_racing_end_as_one_user(services: Services, idp: FakeIssuer) -> None:
    identity = services.id_tokens.verify(idp.id_token("racer"))
    store = UserStore(services.dynamodb, services.settings.table_name)
    winner = store.sign_in(identity, services.clock.now())

    class LateReader(UserStore):
        """Read before the winner wrote: sees no login, then tries to create it too."""

        def __init__(self) -> None:
            super().__init__(services.dynamodb, services.settings.table_name)
            self.reads = 0

        def find_login(self, issuer: str, subject: str) -> str | None:
            self.reads += 1
            return None if self.reads == 1 else super().find_login(issuer, subject)

    loser = LateReader()
    assert loser.sign_in(identity, services.clock.now()) == winner
    assert loser.reads == 2


# -- a crafted exchange is a bad request, never a 500 --------------------------------------

ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"


@pytest.mark.parametrize("token_type", [JWT_TOKEN_TYPE, ACCESS_TOKEN_TYPE], ids=["jwt", "access"])
def test_an_id_token_sent_as_another_subject_token_type_is_400_invalid_request(
    api: Api, token_type: str
) -> None:
    answer = api.call(
        "POST", EXCHANGE, body={"id_token": "x", "subject_token_type": token_type}
    )

    assert_oauth_error(answer, 400, "invalid_request")
    assert "subject_token is required" in answer.json["error_description"]


# -- a login takes no narrowing: sign in, then delegate ------------------------------------

NARROWING = {
    "scope": "memory",
    "expires_in": 60,
    "workspace_id": "ws_01JQ0000000000000000000000",
    "actor": "browser",
}


def assert_narrowing_refused(api: Api, answer: Answer, name: str) -> None:
    assert_oauth_error(answer, 400, "invalid_request")
    assert name in answer.json["error_description"]
    assert "sign in, then delegate" in answer.json["error_description"]
    assert api.services.dynamodb.scan(TableName=api.services.settings.table_name)["Count"] == 0


@pytest.mark.parametrize("name", NARROWING)
def test_a_json_login_asking_for_a_narrower_token_is_400_invalid_request_naming_it(
    api: Api, idp: FakeIssuer, name: str
) -> None:
    answer = api.call("POST", EXCHANGE, body={"id_token": idp.id_token(), name: NARROWING[name]})

    assert_narrowing_refused(api, answer, name)


@pytest.mark.parametrize("name", NARROWING)
def test_a_json_rfc_8693_login_asking_for_a_narrower_token_is_400_invalid_request_naming_it(
    api: Api, idp: FakeIssuer, name: str
) -> None:
    body = {
        "subject_token": idp.id_token(),
        "subject_token_type": ID_TOKEN_TYPE,
        name: NARROWING[name],
    }

    answer = api.call("POST", EXCHANGE, body=body)

    assert_narrowing_refused(api, answer, name)


@pytest.mark.parametrize("name", NARROWING)
def test_a_form_login_asking_for_a_narrower_token_is_400_invalid_request_naming_it(
    api: Api, idp: FakeIssuer, name: str
) -> None:
    fields = {**token_exchange(idp.id_token()), name: str(NARROWING[name])}

    answer = form(api, EXCHANGE, fields)

    assert_narrowing_refused(api, answer, name)


def test_a_form_login_asking_for_scope_and_expires_in_names_both(
    api: Api, idp: FakeIssuer
) -> None:
    fields = {**token_exchange(idp.id_token()), "scope": "memory", "expires_in": "60"}

    answer = form(api, EXCHANGE, fields)

    assert_narrowing_refused(api, answer, "scope, expires_in")
