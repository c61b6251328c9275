// The retry policy, in one place. The Python SDK states the same policy in
// `memory_sdk/retry.py`, with the same numbers.
//
// - A status is retried only if it is 429, 502, 503 or 504. Never a 500: the service answers
//   500 only for a bug of its own, and the same request would meet the same bug.
// - Those statuses, and a request whose answer was lost (reset, timeout), are retried only
//   for calls that are safe to repeat: GET, and DELETE (revoking a key twice is not an error).
//   A POST (create or rotate a key, exchange a login, use a single-use refresh token) may
//   have taken effect, so it is never re-sent once it may have reached the service: a second
//   send could mint a second key or burn a refresh token's whole family.
// - A request that certainly never left (the connection could not be made) is retried for
//   every call.
// - Budget: `retries` re-sends after the first attempt (default 2, at most 10). Re-send n
//   (from 0) waits `min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** n)` with equal jitter (between
//   half and all of it), or the server's `Retry-After` instead; a `Retry-After` over
//   RETRY_AFTER_MAX_SECONDS is not waited for: the error is thrown at once, carrying it.

export const DEFAULT_RETRIES = 2;
export const MAX_RETRIES = 10;
/** Milliseconds before the first re-send, doubling. */
export const BACKOFF_BASE_MS = 500;
/** Milliseconds, the longest backoff. */
export const BACKOFF_CAP_MS = 8_000;
/** Seconds; a longer Retry-After is thrown, not waited. */
export const RETRY_AFTER_MAX_SECONDS = 60;

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** Methods whose repetition has the effect of one send. */
export const REPEATABLE_METHODS: ReadonlySet<string> = new Set(["GET", "DELETE"]);

/** Whether a call may be sent again after it may have reached the service. */
export function isRepeatable(method: string): boolean {
  return REPEATABLE_METHODS.has(method.toUpperCase());
}

export interface FailedAttempt {
  /** The answer's status; undefined when no answer came. */
  status?: number | undefined;
  /** False only when the request certainly never left this process. */
  sent: boolean;
}

/** Whether a failed attempt may be retried, budget aside. */
export function shouldRetry(method: string, failure: FailedAttempt): boolean {
  if (!failure.sent) return true;
  if (failure.status !== undefined && !RETRYABLE_STATUSES.has(failure.status)) return false;
  return isRepeatable(method);
}

/**
 * Milliseconds to wait before re-send `attempt` (from 0), or undefined when the server asks
 * for longer than RETRY_AFTER_MAX_SECONDS. `random` returns a number in [0, 1).
 */
export function retryDelay(
  attempt: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (retryAfterSeconds !== undefined) {
    return retryAfterSeconds > RETRY_AFTER_MAX_SECONDS ? undefined : retryAfterSeconds * 1000;
  }
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  // "Equal jitter": at least half the ceiling, so retries still back off.
  return ceiling * (0.5 + 0.5 * random());
}
