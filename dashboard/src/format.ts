// How values read on the page. Pure functions: the unit tests run them in Node.

import { ApiError, NetworkError, OAuthError, type EventType } from "memory-sdk";

export const DAY_MS = 86_400_000;
/** Inside this, an active key is marked "expires soon" (the service warns 7 days ahead). */
export const EXPIRES_SOON_MS = 7 * DAY_MS;

export interface Expiring {
  status: string;
  expiresAt: string;
  createdAt?: string;
}

/** An active key within EXPIRES_SOON_MS of its expiry, or within the last half of its
 * lifetime when that is shorter: a fresh 7-day key is not yet "expires soon". */
export function expiresSoon(key: Expiring, now: number = Date.now()): boolean {
  const expires = Date.parse(key.expiresAt);
  const created = key.createdAt === undefined ? Number.NaN : Date.parse(key.createdAt);
  const window = Number.isFinite(created) ? Math.min(EXPIRES_SOON_MS, (expires - created) / 2) : EXPIRES_SOON_MS;
  return key.status === "active" && Number.isFinite(expires) && expires - now <= window;
}

/** When a key was last used, as shown: its last use is recorded to 5 minutes (rounded
 * down), so a key used just after its creation would read as used before it. */
export function lastUsedShown(key: { createdAt: string; lastUsedAt?: string | null }): string | null {
  const used = key.lastUsedAt ?? null;
  if (used === null) return null;
  return Date.parse(used) < Date.parse(key.createdAt) ? key.createdAt : used;
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

// A message per problem code, written for the person at the page. Codes not listed fall back
// to the service's `detail` (already written for people) with its API wording softened.
const PROBLEM_MESSAGES: Readonly<Record<string, string>> = {
  not_a_member: "You are not a member of this workspace (anymore). Ask its owner to add you again.",
  owner_required: "Only the workspace's owner can do this.",
  owner_cannot_leave: "The owner cannot be removed from their own workspace.",
  user_not_found:
    "Nobody has signed in with that email or user id yet. Ask them to sign in to this dashboard once, then add them again.",
  invalid_user_id: "Enter the email they sign in with, or their user id (usr_…).",
  invalid_label: "The label cannot be used: keep it to 1–100 characters, without control characters or text-direction marks.",
  invalid_name: "The name cannot be used: keep it to 1–100 characters, without control characters or text-direction marks.",
  invalid_lifetime: "The lifetime must be a whole number of days from 1 to 90.",
  key_not_active: "Only an active key can be rotated.",
  key_revoked: "This key has been revoked: it can no longer be changed or revealed.",
  key_not_revealable: "This key was created before keys could be shown again: rotate it to get a new one.",
  too_many_requests: "Too many requests in a short time. Wait a moment, then try again.",
  dependency_unavailable: "The service is having trouble right now. Nothing was changed; try again in a moment.",
  internal_error: "Something went wrong on our side. Try again in a moment.",
  insufficient_scope: "Your sign-in does not allow this.",
  invalid_credentials: "Your session is no longer valid.",
  expired_credentials: "Your session has expired.",
  revoked_credentials: "Your session was ended.",
  missing_credentials: "You are signed out.",
  invalid_grant: "Your session has ended.",
  limit_reached: "You have reached a limit of the service.",
  quota_exceeded: "This key used its daily quota: its requests are refused until midnight UTC. Raise or remove the quota under Edit.",
  invalid_quota: "The daily quota must be a whole number of requests from 1 to 10,000,000, or empty for none.",
  invalid_dpop_jkt:
    "The service did not take the key pair's thumbprint. Paste the pair's public JWK again: its thumbprint shows below the field once it is read.",
};

/** The time the dashboard waits for an answer before it offers to try again: the service's
 * own failure budget (a stuck dependency is answered 503 within 5 s), twice, for the network. */
export const ANSWER_BUDGET_MS = 10_000;
/** Requests that take longer than this show progress. */
export const PROGRESS_AFTER_MS = 300;

/** The dashboard gave up waiting (ANSWER_BUDGET_MS): the request may still complete. */
export class TimedOut extends Error {
  constructor() {
    super("The service did not answer in time. Check your connection, then try again.");
    this.name = "TimedOut";
  }
}

/** The API's wording made personal: no "The caller", no dependency names. */
function softened(detail: string): string {
  return detail
    .replace(/^The caller is\b/, "You are")
    .replace(/^The caller\b/, "You")
    .replace(/^url must be\b/, "The URL must be")
    .replace(/\bA dependency \([^)]*\) is unavailable; retry later\./, PROBLEM_MESSAGES["dependency_unavailable"] ?? "")
    .replace(/\bA dependency is unavailable; retry later\./, PROBLEM_MESSAGES["dependency_unavailable"] ?? "");
}

/** What went wrong, in words a person can act on: a message per problem code, else the
 * service's `detail`. */
export function problemText(error: unknown): string {
  if (error instanceof OAuthError) {
    return PROBLEM_MESSAGES[error.code] ?? error.detail ?? "The sign-in was refused.";
  }
  if (error instanceof ApiError) {
    const known = PROBLEM_MESSAGES[error.code];
    // These details name the limit, or the address and what to write instead.
    if ((error.code === "limit_reached" || error.code === "invalid_cidr") && error.detail) return softened(error.detail);
    if (known !== undefined) return known;
    return error.detail ? softened(error.detail) : `The service refused this (${error.code}).`;
  }
  if (error instanceof NetworkError) {
    return "The service could not be reached. Check the connection and try again.";
  }
  if (error instanceof Error && error.message !== "") return error.message;
  return "Something went wrong.";
}

/** A failure that the same request may not meet again (the service's trouble, the network, an
 * answer later than the budget, too many requests): a form offers "Try again" for these only,
 * since any other refusal needs the form changed first. */
export function worthRetrying(error: unknown): boolean {
  if (error instanceof ApiError) return error.status >= 500 || error.status === 429;
  return error instanceof NetworkError || error instanceof TimedOut;
}

/** Ends with one "Sign in again." whatever the reason said. */
export function signInAgain(reason: string): string {
  const stripped = reason.replace(/(\s*Sign in again\.)+\s*$/, "").trim();
  return `${stripped} Sign in again.`.trim();
}

/** Every event type the service records, in words: typed by the API's own list of types
 * (the SDK's EventType, generated from the service), so a type added there fails the build
 * until it has words here; the Activity filter lists these. */
const EVENT_NAMES: Readonly<Record<EventType, string>> = {
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
  "trust_policy.created": "Trust policy created",
  "trust_policy.deleted": "Trust policy deleted",
  "workload.exchanged": "Workload signed in with a trust policy",
  "grant.created": "App connected",
  "grant.revoked": "App disconnected",
  "session.revoked": "Sign-in ended",
  "service_client.created": "Service client registered",
  "service_client.deleted": "Service client deleted",
  "service_client.token_issued": "Service client got a token",
  "webhook.created": "Webhook added",
  "webhook.updated": "Webhook changed",
  "webhook.secret_rotated": "Webhook signing secret rotated",
  "webhook.deleted": "Webhook deleted",
  "webhook.disabled": "Webhook disabled after 3 days of failures",
};

export const EVENT_TYPES: readonly string[] = Object.keys(EVENT_NAMES);

/** An event type in words; one this page does not know yet reads as words too
 * ("webhook.created": "Webhook created"), never as a raw code. */
export function eventName(type: string): string {
  const known = (EVENT_NAMES as Readonly<Record<string, string>>)[type];
  if (known !== undefined) return known;
  const [subject = type, verb = ""] = type.split(".", 2);
  const words = `${subject.replace(/_/g, " ")} ${verb.replace(/_/g, " ")}`.trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A webhook's event filter in words: "Every event", or the types' names. */
export function eventsText(events: readonly string[]): string {
  return events.includes("*") ? "Every event" : events.map(eventName).join(", ");
}

/** The receiver's last answer to a delivery: its status code, "no answer" (a timeout or a
 * refused connection), or an em dash before the first attempt. */
export function lastResponse(delivery: { attempts: number; lastStatusCode: number | null }): string {
  if (delivery.lastStatusCode !== null) return String(delivery.lastStatusCode);
  return delivery.attempts > 0 ? "no answer" : "—";
}

/** Why the session ended, said once: "Your session has ended: …" unless the reason says it. */
export function sessionEnded(reason: string): string {
  return /\bsession\b/i.test(reason) ? reason : `Your session has ended: ${reason}`;
}

// Browsers first by the token that tells them apart (Edge and Opera also say Chrome; Chrome
// also says Safari), then systems (Android also says Linux; iPhones also say Mac OS X).
const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdgA?\//, "Edge"],
  [/\bOPR\//, "Opera"],
  [/\bFirefox\//, "Firefox"],
  [/\bFxiOS\//, "Firefox"],
  [/\bCriOS\//, "Chrome"],
  [/\bHeadlessChrome\//, "Chrome (headless)"],
  [/\bChromium\//, "Chromium"],
  [/\bChrome\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\//, "Safari"],
];
const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\bAndroid\b/, "Android"],
  [/\b(?:iPhone|iPad|iPod)\b/, "iOS"],
  [/\bWindows\b/, "Windows"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];
// The service's own clients that name themselves (browsers send their own User-Agent).
const CLIENTS: ReadonlyArray<[RegExp, string]> = [[/^memory-sdk-python\//, "Python SDK"]];

/** A sign-in's device in words ("Chrome on Linux", "Python SDK"), from its User-Agent. */
export function deviceName(userAgent: string | null | undefined): string {
  const agent = (userAgent ?? "").trim();
  if (agent === "") return "Unknown device";
  for (const [pattern, name] of CLIENTS) if (pattern.test(agent)) return name;
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
  if (browser !== undefined) return system === undefined ? browser : `${browser} on ${system}`;
  // Anything else (a script, curl, an HTTP library): its first product, without its version.
  const product = agent.split(/[\s/]/, 1)[0] ?? agent;
  return product === "Mozilla" && system !== undefined ? `A browser on ${system}` : product;
}

export const GRACE_CHOICES: ReadonlyArray<{ label: string; seconds: number }> = [
  { label: "Now: the old key stops working at once", seconds: 0 },
  { label: "In 1 hour", seconds: 3_600 },
  { label: "In 24 hours", seconds: 86_400 },
  { label: "In 7 days", seconds: 604_800 },
];
