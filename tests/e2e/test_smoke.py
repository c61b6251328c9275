from tests.e2e.conftest import Stack


def test_stack_serves_whoami_for_the_development_user(stack: Stack) -> None:
    answer = stack.call("GET", "/v1/auth/whoami", stack.token)
    assert answer.status_code == 200
    assert answer.json()["userId"] == stack.user_id
