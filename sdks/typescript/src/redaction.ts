// Error messages are shown, logged and pasted into tickets: nothing secret may reach one.
// The service promises that its `detail` never holds a secret; this is the client's own
// guard, so that a misbehaving proxy or a future bug cannot leak a key through us either.

const REDACTED = "[redacted]";
const MAX_TEXT = 500;

// API keys (`svc_` with a checksum, `legacy_` without), and anything shaped like a JWT.
const KEY_PATTERN = /\b(svc|legacy)_[A-Za-z0-9_-]{8,}/g;
const JWT_PATTERN = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** `text` with every known secret and every key- or token-shaped string replaced. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let clean = text;
  for (const secret of secrets) {
    // Short values (an empty string, a one-letter test value) would blank out prose.
    if (secret.length >= 8) clean = clean.split(secret).join(REDACTED);
  }
  clean = clean.replace(KEY_PATTERN, `$1_${REDACTED}`).replace(JWT_PATTERN, REDACTED);
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean;
}
