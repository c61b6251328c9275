"""The retry policy, in one place. The TypeScript SDK states the same policy in `src/retry.ts`.

- A status is retried only if it is 429, 502, 503 or 504. Never a 500: the service answers
  500 only for a bug of its own, and the same request would meet the same bug.
- Those statuses, and a request whose answer was lost (reset, timeout), are retried only for
  calls that are safe to repeat: GET, and DELETE (revoking a key twice is not an error).
  A POST (create or rotate a key, exchange a login, use a single-use refresh token) may have
  taken effect, so it is never re-sent once it may have reached the service: a second send
  could mint a second key or burn a refresh token's whole family.
- A request that certainly never left (the connection could not be made) is retried for
  every call.
- Budget: `retries` re-sends after the first attempt (default 2, at most 10). Re-send n
  (from 0) waits `min(BACKOFF_CAP, BACKOFF_BASE * 2**n)` with equal jitter (between half and
  all of it), or the server's `Retry-After` instead; a `Retry-After` over RETRY_AFTER_MAX is
  not waited for: the error is raised at once, carrying it.
"""

from __future__ import annotations

from collections.abc import Callable

DEFAULT_RETRIES = 2
MAX_RETRIES = 10
BACKOFF_BASE = 0.5  # seconds before the first re-send, doubling
BACKOFF_CAP = 8.0  # seconds, the longest backoff
RETRY_AFTER_MAX = 60.0  # seconds; a longer Retry-After is raised, not waited

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
# Methods whose repetition has the effect of one send.
REPEATABLE_METHODS = frozenset({"GET", "DELETE"})


def is_repeatable(method: str) -> bool:
    """Whether a call may be sent again after it may have reached the service."""
    return method.upper() in REPEATABLE_METHODS


def should_retry(method: str, *, status: int | None = None, sent: bool = True) -> bool:
    """Whether a failed attempt may be retried, budget aside.

    `status` is the answer's status; None when no answer came. `sent` is False only when the
    request certainly never left this process.
    """
    if not sent:
        return True
    if status is not None and status not in RETRYABLE_STATUSES:
        return False
    return is_repeatable(method)


def retry_delay(
    attempt: int,
    retry_after: float | None = None,
    *,
    base: float = BACKOFF_BASE,
    cap: float = BACKOFF_CAP,
    retry_after_max: float = RETRY_AFTER_MAX,
    jitter: Callable[[], float],
) -> float | None:
    """Seconds to wait before re-send `attempt` (from 0), or None when the wait is too long."""
    if retry_after is not None:
        return retry_after if retry_after <= retry_after_max else None
    ceiling = min(cap, base * 2.0**attempt)
    # "Equal jitter": at least half the ceiling, so retries still back off.
    return ceiling * (0.5 + 0.5 * jitter())
