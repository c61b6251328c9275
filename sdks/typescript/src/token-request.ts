// The one form POST both token clients make (a service client at /v1/oauth/token, a workload
// at /v1/auth/exchange): its RFC 6749 answer read into the token and its lifetime, or the
// client's own error naming the service's `error` (never a token).

import type { MemorySDKError } from "./errors.js";

export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface Named {
  /** What was refused: "The token request", "The exchange". */
  refused: string;
  /** What answered without a token: "The token endpoint", "The exchange". */
  answered: string;
}

/** The access token and its lifetime in seconds, or `Refused` (a 4xx/5xx, or no token). */
export async function requestToken(
  fetch: Fetch,
  url: string,
  form: URLSearchParams,
  Refused: new (message: string) => MemorySDKError,
  named: Named,
): Promise<{ token: string; expiresIn: number }> {
  const answer = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  const text = await answer.text();
  const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (answer.status !== 200) {
    throw new Refused(
      `${named.refused} was refused (${answer.status} ${String(body.error)}): ${String(body.error_description)}`,
    );
  }
  if (typeof body.access_token !== "string" || typeof body.expires_in !== "number") {
    throw new Refused(`${named.answered} answered no access_token/expires_in.`);
  }
  return { token: body.access_token, expiresIn: body.expires_in };
}
