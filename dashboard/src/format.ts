// How values read on the page. Pure functions: the unit tests run them in Node.

import { ApiError, NetworkError, OAuthError } from "memory-sdk";

export const DAY_MS = 86_400_000;
/** Inside this, an active key is marked "expires soon" (the service warns 7 days ahead). */
export const EXPIRES_SOON_MS = 7 * DAY_MS;

export interface Expiring {
  status: string;
  expiresAt: string;
}

export function expiresSoon(key: Expiring, now: number = Date.now()): boolean {
  const expires = Date.parse(key.expiresAt);
  return key.status === "active" && Number.isFinite(expires) && expires - now <= EXPIRES_SOON_MS;
}

const DATE_TIME = new Intl.DateTimeFormat("en", {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

/** "Nov 23, 2026, 16:04" in the reader's time zone, or an em dash for none. */
export function dateTime(value: string | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const parsed = Date.parse(value);
  return Number.isFinite(parsed) ? DATE_TIME.format(parsed) : value;
}

/** What went wrong, in words a person can act on: the service's `detail` first. */
export function problemText(error: unknown): string {
  if (error instanceof OAuthError) {
    return error.detail ?? `The sign-in was refused (${error.code}).`;
  }
  if (error instanceof ApiError) {
    return error.detail ?? `The service answered ${error.status} (${error.code}).`;
  }
  if (error instanceof NetworkError) {
    return "The service could not be reached. Check the connection and try again.";
  }
  if (error instanceof Error && error.message !== "") return error.message;
  return "Something went wrong.";
}

const EVENT_NAMES: Readonly<Record<string, string>> = {
  "key.created": "Key created",
  "key.revealed": "Key revealed",
  "key.rotated": "Key rotated",
  "key.revoked": "Key revoked",
  "key.updated": "Key changed",
  "key.expiring": "Key expires in 7 days",
  "key.expired": "Key expired",
  "key.leaked": "Key reported leaked (revoked)",
  "key.quota_exceeded": "Key reached its daily quota",
  "workspace.created": "Workspace created",
  "member.added": "Member added",
  "member.removed": "Member removed",
};

export function eventName(type: string): string {
  return EVENT_NAMES[type] ?? type;
}

export const GRACE_CHOICES: ReadonlyArray<{ label: string; seconds: number }> = [
  { label: "Now: the old key stops working at once", seconds: 0 },
  { label: "In 1 hour", seconds: 3_600 },
  { label: "In 24 hours", seconds: 86_400 },
  { label: "In 7 days", seconds: 604_800 },
];
