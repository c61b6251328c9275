"""Single-use assertion ids: one conditional put per `jti` (no transaction)."""

from __future__ import annotations

from chalicelib.clock import FrozenClock, epoch
from chalicelib.runtime import Services


def test_a_jti_is_accepted_once_per_issuer(services: Services, clock: FrozenClock) -> None:
    now = clock.now()
    exp = epoch(now) + 300
    replays = services.replays

    assert replays.spend("https://idp.example", "j-1", exp, now) is True
    assert replays.spend("https://idp.example", "j-1", exp, now) is False
    assert replays.spend("https://other.example", "j-1", exp, now) is True


def test_a_spent_jti_past_its_assertions_exp_is_treated_as_gone(
    services: Services, clock: FrozenClock
) -> None:
    now = clock.now()
    replays = services.replays
    assert replays.spend("https://idp.example", "j-2", epoch(now) + 60, now) is True

    clock.advance(seconds=120)  # the item's ttl passed, not yet swept

    assert replays.spend("https://idp.example", "j-2", epoch(clock.now()) + 60, clock.now())
