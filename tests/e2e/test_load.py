"""`make load`'s checks, on a small bounded run against the session's stack: no 5xx, nothing
granted to a key after its revocation was acknowledged, one winner per concurrent rotation.
Its figures (throughput, latency) are `make load`'s to print, never judged here."""

from __future__ import annotations

from bench.load import Load
from tests.e2e.conftest import Stack


def test_a_small_bounded_load_keeps_every_promise(stack: Stack) -> None:
    load = Load(stack.endpoint, stack.token, stack.workspace_id, seed=16)

    report = load.run(requests=120, concurrency=4, race_every=8)

    assert report["failures"] == []
    assert report["serverErrors"] == 0
    assert report["grantedAfterRevocation"] == 0
    assert report["requestsAfterRevocation"] > 0
    assert report["rotationRaces"] == report["racesWithOneWinner"] > 0


def test_the_load_refuses_anything_but_loopback() -> None:
    import pytest

    with pytest.raises(ValueError):
        Load("http://auth.example.com", "token", "ws", seed=1)
