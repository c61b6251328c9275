// Error messages are shown, logged and pasted into tickets: nothing secret may reach one.
// The service promises that its `detail` never holds a secret; this is the client's own
// guard, so that a misbehaving proxy or a future bug cannot leak a key through us either.

const REDACTED = "[redacted]";
const MAX_TEXT = 500;

// The same patterns as the Python SDK's `redact`. A key is `svc_` or `legacy_` and every
// printable, non-space ASCII character after it: legacy keys may hold any of them, so
// punctuation right after a key is taken for part of it. Then anything shaped like a JWT,
// and whatever follows "Bearer".
const KEY_PATTERN = /(svc|legacy)_[\x21-\x7e]+/g;
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;
const BEARER_PATTERN = /bearer\s+\S+/gi;

/** `text` with every known secret and every key- or token-shaped string replaced. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let clean = text;
  for (const secret of secrets) {
    // Short values (an empty string, a one-letter test value) would blank out prose.
    if (secret.length >= 8) clean = clean.split(secret).join(REDACTED);
  }
  clean = clean
    .replace(KEY_PATTERN, `$1_${REDACTED}`)
    .replace(JWT_PATTERN, REDACTED)
    .replace(BEARER_PATTERN, `Bearer ${REDACTED}`);
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean;
}
