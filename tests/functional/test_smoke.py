from tests.functional.conftest import Api


def test_user_token_creates_admin_key_that_authenticates(api: Api, alice: str) -> None:
    created = api.create_key(alice)
    answer = api.call("GET", "/v1/auth/whoami", created["key"])
    assert answer.status == 200
    assert answer.json["keyId"] == created["id"]
