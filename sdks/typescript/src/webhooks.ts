// Verifying a webhook delivery on the receiving side (Standard Webhooks).
//
// Each delivery carries `webhook-id`, `webhook-timestamp` and `webhook-signature` (one or
// more space-separated `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).
// `verifyWebhook` checks the signature against every secret it is given (during a rotation,
// give both: the new and the old), compares in constant time, and refuses a timestamp more
// than 5 minutes from now. Pass the body exactly as received (a string or its bytes).

import { MemorySDKError } from "./errors.js";

export const WEBHOOK_SECRET_PREFIX = "whsec_";
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends MemorySDKError {
  override name = "WebhookVerificationError";
}

export interface VerifyWebhookOptions {
  /** Seconds a timestamp may be from now, either way (default 300). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default Date.now). */
  now?: () => number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() === name) {
      return Array.isArray(value) ? String(value[0]) : typeof value === "string" ? value : undefined;
    }
  }
  return undefined;
}

function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new WebhookVerificationError("a webhook secret is not whsec_ and base64");
  }
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The `v1,` signature of one delivery with one secret. */
export async function signWebhook(
  secret: string,
  messageId: string,
  timestamp: number,
  body: string | Uint8Array,
): Promise<string> {
  const keyBytes = fromBase64(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(6) : secret);
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const prefix = new TextEncoder().encode(`${messageId}.${timestamp}.`);
  const payload = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const signed = new Uint8Array(prefix.length + payload.length);
  signed.set(prefix);
  signed.set(payload, prefix.length);
  const digest = await crypto.subtle.sign("HMAC", key, signed as BufferSource);
  return `v1,${toBase64(new Uint8Array(digest))}`;
}

/** Equal strings in time that depends on their length only. */
function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let difference = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    difference |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return difference === 0;
}

/**
 * The delivery's JSON (`{type, timestamp, data}`) once its signature verifies with one of
 * `secrets`; a WebhookVerificationError otherwise.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: HeaderSource,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<unknown> {
  const messageId = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!messageId || !stamp || !signatures) {
    throw new WebhookVerificationError("the webhook headers are missing");
  }
  if (!/^[0-9]+$/.test(stamp)) {
    throw new WebhookVerificationError("webhook-timestamp is not a number");
  }
  const timestamp = Number(stamp);
  const now = (options.now ?? Date.now)() / 1000;
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  }
  const keys = typeof secrets === "string" ? [secrets] : [...secrets];
  if (keys.length === 0) {
    throw new WebhookVerificationError("no webhook secret to verify with");
  }
  const offered = signatures
    .split(" ")
    .filter((part) => part.startsWith("v1,"))
    .map((part) => part.slice(3));
  for (const secret of keys) {
    const expected = (await signWebhook(secret, messageId, timestamp, body)).slice(3);
    let matched = false;
    for (const value of offered) matched = constantTimeEqual(value, expected) || matched;
    if (matched) {
      return JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
    }
  }
  throw new WebhookVerificationError("no webhook signature matches");
}
