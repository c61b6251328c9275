// What the forms send: their fields turned into the SDK's inputs, checked the way the
// service will check them so that a person hears about a typo before a round trip.
// Optional fields are sent only when filled in.

import type { ApiKeyUpdate, DataPlaneScope, NewApiKey, RotateOptions, Scope } from "memory-sdk";

export const DATA_PLANE_SCOPES: readonly DataPlaneScope[] = ["memory", "entities", "reasoning", "ontology", "skills"];
export const ADMIN_SCOPE = "workspace:admin";
export const MAX_LIFETIME_DAYS = 90;
export const MAX_REQUESTS_PER_DAY = 10_000_000;

export interface NewKeyForm {
  label: string;
  category: "workspace" | "admin";
  workspaceId: string;
  scopes: readonly string[];
  /** The lifetime field as typed: empty means the service's default (90 days). */
  lifetimeDays: string;
  /** The allow-list field as typed: CIDRs separated by commas, spaces or new lines. */
  allowedCidrs: string;
  /** The daily quota field as typed: empty means none. */
  requestsPerDay?: string;
  /** The public key field as typed (a JWK): empty means a bearer key. */
  publicJwk?: string;
  /** The thumbprint computed from `publicJwk` (`jwkThumbprint`), once it was. */
  dpopJkt?: string;
}

// The members an RFC 7638 thumbprint is made of, per key type, and a private key's members.
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  EC: ["crv", "kty", "x", "y"],
  RSA: ["e", "kty", "n"],
  OKP: ["crv", "kty", "x"],
};
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/**
 * A pasted public JWK as the canonical JSON its thumbprint hashes (RFC 7638), or why not:
 * refused when it is not JSON, not an EC, RSA or OKP key, or holds a private part.
 */
export function canonicalJwk(text: string): Checked<string | null> {
  if (text.trim() === "") return { ok: true, value: null };
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch {
    return { ok: false, problem: "The public key must be a JWK: a JSON object such as {\"kty\": \"EC\", …}." };
  }
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) {
    return { ok: false, problem: "The public key must be a JWK: a JSON object." };
  }
  const key = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((name) => name in key)) {
    return { ok: false, problem: "This JWK holds a private key: paste only the public key." };
  }
  const members = THUMBPRINT_MEMBERS[String(key["kty"])];
  if (members === undefined || !members.every((name) => typeof key[name] === "string")) {
    return { ok: false, problem: "The public key must be an EC (P-256), RSA or Ed25519 JWK with all its members." };
  }
  return { ok: true, value: JSON.stringify(Object.fromEntries(members.map((name) => [name, key[name]]))) };
}

/** The RFC 7638 SHA-256 thumbprint of a canonical JWK: what `dpopJkt` binds a key to. */
export async function jwkThumbprint(canonical: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical)));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The CIDRs of an allow-list field; the service judges each one. */
export function cidrList(text: string): string[] {
  return text.split(/[\s,]+/).filter((part) => part !== "");
}

function lifetime(text: string): Checked<number | undefined> {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, value: undefined };
  const days = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || days < 1 || days > MAX_LIFETIME_DAYS) {
    return { ok: false, problem: `The lifetime must be a whole number of days from 1 to ${MAX_LIFETIME_DAYS}.` };
  }
  return { ok: true, value: days };
}

export function newKeyRequest(form: NewKeyForm): Checked<NewApiKey> {
  const label = form.label.trim();
  if (label === "") return { ok: false, problem: "Give the key a label, such as the app that will use it." };
  if (form.scopes.length === 0) return { ok: false, problem: "Choose at least one scope." };
  const days = lifetime(form.lifetimeDays);
  if (!days.ok) return days;
  const cidrs = cidrList(form.allowedCidrs);
  const quota = quotaValue(form.requestsPerDay ?? "");
  if (!quota.ok) return quota;
  const jwk = canonicalJwk(form.publicJwk ?? "");
  if (!jwk.ok) return jwk;
  if (jwk.value !== null && form.dpopJkt === undefined) {
    return { ok: false, problem: "Wait for the key's thumbprint, then create the key." };
  }
  const optional: { expiresInDays?: number; allowedCidrs?: string[]; requestsPerDay?: number; dpopJkt?: string } = {};
  if (jwk.value !== null && form.dpopJkt !== undefined) optional.dpopJkt = form.dpopJkt;
  if (days.value !== undefined) optional.expiresInDays = days.value;
  if (cidrs.length > 0) optional.allowedCidrs = cidrs;
  if (quota.value !== null) optional.requestsPerDay = quota.value;
  if (form.category === "workspace") {
    if (form.workspaceId === "") return { ok: false, problem: "Choose the workspace the key works in." };
    const scopes = form.scopes.filter((s): s is DataPlaneScope => (DATA_PLANE_SCOPES as readonly string[]).includes(s));
    return { ok: true, value: { label, category: "workspace", workspaceId: form.workspaceId, scopes, ...optional } };
  }
  return { ok: true, value: { label, category: "admin", scopes: [...form.scopes] as Scope[], ...optional } };
}

/** A rotation's options: "now" sends no body, which every version of the service accepts. */
export function rotateRequest(graceSeconds: number): RotateOptions {
  return graceSeconds > 0 ? { gracePeriodSeconds: graceSeconds } : {};
}

/** What an edit changes: only fields that differ from the key as it is. */
export function updateRequest(
  current: { label: string; allowedCidrs?: string[] | null; requestsPerDay?: number | null },
  form: { label: string; allowedCidrs?: string; requestsPerDay?: string },
): Checked<ApiKeyUpdate> {
  const label = form.label.trim();
  if (label === "") return { ok: false, problem: "The label cannot be empty." };
  const changes: ApiKeyUpdate = {};
  if (label !== current.label) changes.label = label;
  if (form.allowedCidrs !== undefined) {
    const cidrs = cidrList(form.allowedCidrs);
    const before = current.allowedCidrs ?? [];
    if (cidrs.join(",") !== before.join(",")) changes.allowedCidrs = cidrs.length > 0 ? cidrs : null;
  }
  if (form.requestsPerDay !== undefined) {
    const quota = quotaValue(form.requestsPerDay);
    if (!quota.ok) return quota;
    if (quota.value !== (current.requestsPerDay ?? null)) changes.requestsPerDay = quota.value;
  }
  if (Object.keys(changes).length === 0) return { ok: false, problem: "Nothing to change." };
  return { ok: true, value: changes };
}

// Trust policies: the subject pattern checked as the service checks it, and what it matches.
const MIN_SUBJECT_PREFIX = 6;
export const MAX_POLICY_LIFETIME_SECONDS = 3_600;
export const MIN_POLICY_LIFETIME_SECONDS = 60;

/** Why the service would refuse this subject pattern (its own words), or null. */
export function subjectProblem(subject: string): string | null {
  if (subject === "") return "Enter the subject (sub) the workload's token carries.";
  if (subject !== subject.trim()) return "The subject must not start or end with spaces.";
  if (!subject.includes("*")) return null;
  if (subject.indexOf("*") !== subject.length - 1) return "The subject may hold one '*', at its end (a prefix match).";
  const prefix = subject.slice(0, -1);
  if (prefix === "") {
    return "subject '*' alone would trust every workload of the issuer: name the repository, project or service account.";
  }
  if (prefix.length < MIN_SUBJECT_PREFIX || !/[:/]/.test(prefix)) {
    return (
      `subject '${subject}' has no fixed prefix: before '*' it needs at least ${MIN_SUBJECT_PREFIX} characters ` +
      "and a ':' or '/' (e.g. 'repo:acme/agents:ref:refs/heads/*'), so it cannot match other owners' workloads."
    );
  }
  return null;
}

/** As the service matches: exact, or a prefix when the pattern ends in `*`. */
export function subjectMatches(pattern: string, subject: string): boolean {
  return pattern.endsWith("*") ? subject.startsWith(pattern.slice(0, -1)) : subject === pattern;
}

/** Examples of what a valid pattern matches and what it does not (a sibling subject). */
export function subjectPreview(pattern: string): { matches: string; notMatches: string | null } {
  const prefix = pattern.endsWith("*") ? pattern.slice(0, -1) : pattern;
  const matches = pattern.endsWith("*") ? `${prefix}…` : pattern;
  // A sibling: the last part before the end swapped for another, e.g. repo:acme/agents:… →
  // repo:acme/other:…
  const trailing = /[:/]$/.test(prefix) ? prefix.slice(-1) : "";
  const body = trailing === "" ? prefix : prefix.slice(0, -1);
  const cut = Math.max(body.lastIndexOf(":"), body.lastIndexOf("/"));
  let sibling = cut < 0 ? `${body}-other` : `${body.slice(0, cut + 1)}other${trailing}`;
  if (pattern.endsWith("*")) sibling = `${sibling}…`;
  if (subjectMatches(pattern, sibling.replace(/…$/, "")) || sibling === matches) sibling = `${body}-other${trailing}`;
  return { matches, notMatches: subjectMatches(pattern, sibling.replace(/…$/, "")) ? null : sibling };
}

export interface TrustPolicyForm {
  name: string;
  issuer: string;
  audience: string;
  subject: string;
  /** One `name=value` per line. */
  claims: string;
  scopes: readonly string[];
  /** Minutes, as typed: empty means the service's default (15). */
  lifetimeMinutes: string;
}

export function trustPolicyRequest(form: TrustPolicyForm): Checked<{
  name: string;
  issuer: string;
  audience: string;
  subject: string;
  claims?: Record<string, string>;
  scopes: string[];
  maxLifetimeSeconds?: number;
}> {
  const name = form.name.trim();
  if (name === "") return { ok: false, problem: "Give the policy a name, such as the pipeline it trusts." };
  const issuer = form.issuer.trim();
  if (!/^https?:\/\/[^\s]+$/.test(issuer)) return { ok: false, problem: "The issuer must be an https URL, such as https://token.actions.githubusercontent.com." };
  const audience = form.audience.trim();
  if (audience === "") return { ok: false, problem: "Enter the audience (aud) the workload's token is issued for." };
  const subject = form.subject.trim();
  const problem = subjectProblem(subject);
  if (problem !== null) return { ok: false, problem };
  if (form.scopes.length === 0) return { ok: false, problem: "Choose at least one scope." };
  const claims: Record<string, string> = {};
  for (const line of form.claims.split("\n").map((l) => l.trim()).filter((l) => l !== "")) {
    const at = line.indexOf("=");
    if (at < 1 || at === line.length - 1) return { ok: false, problem: `Write each claim as name=value (“${line}” is not).` };
    claims[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  const value: ReturnType<typeof trustPolicyRequest> & { ok: true } = {
    ok: true,
    value: { name, issuer, audience, subject, scopes: [...form.scopes] },
  };
  if (Object.keys(claims).length > 0) value.value.claims = claims;
  const minutes = form.lifetimeMinutes.trim();
  if (minutes !== "") {
    const seconds = Number(minutes) * 60;
    if (!/^\d+$/.test(minutes) || seconds < MIN_POLICY_LIFETIME_SECONDS || seconds > MAX_POLICY_LIFETIME_SECONDS) {
      return { ok: false, problem: "The token lifetime must be a whole number of minutes from 1 to 60." };
    }
    value.value.maxLifetimeSeconds = seconds;
  }
  return value;
}

/** A daily quota field as typed: empty means none. */
export function quotaValue(text: string): Checked<number | null> {
  const trimmed = text.trim().replace(/[\s,_]/g, "");
  if (trimmed === "") return { ok: true, value: null };
  const count = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || count < 1 || count > MAX_REQUESTS_PER_DAY) {
    return { ok: false, problem: "The daily quota must be a whole number of requests from 1 to 10,000,000, or empty for none." };
  }
  return { ok: true, value: count };
}

// Webhooks: a subscription's URL and the event types it wants ("*": every type, also those
// added later). The service judges the URL (https and a public host name).
export const EVERY_EVENT = "*";

export interface WebhookForm {
  url: string;
  description: string;
  /** Every event type, also those added later. */
  every: boolean;
  /** The types chosen when not every one. */
  events: readonly string[];
}

function webhookFields(form: WebhookForm): Checked<{ url: string; events: string[] }> {
  const url = form.url.trim();
  if (url === "") return { ok: false, problem: "Enter the URL your receiver listens at, such as https://hooks.example.com/memory." };
  if (!form.every && form.events.length === 0) return { ok: false, problem: "Choose at least one event type, or every event." };
  return { ok: true, value: { url, events: form.every ? [EVERY_EVENT] : [...form.events] } };
}

export function newWebhookRequest(form: WebhookForm): Checked<{ url: string; events: string[]; description?: string }> {
  const fields = webhookFields(form);
  if (!fields.ok) return fields;
  const description = form.description.trim();
  return { ok: true, value: description === "" ? fields.value : { ...fields.value, description } };
}

/** What an edit changes: the URL and the events, only where they differ. */
export function webhookChanges(
  current: { url: string; events: readonly string[] },
  form: WebhookForm,
): Checked<{ url?: string; events?: string[] }> {
  const fields = webhookFields(form);
  if (!fields.ok) return fields;
  const changes: { url?: string; events?: string[] } = {};
  if (fields.value.url !== current.url) changes.url = fields.value.url;
  if ([...fields.value.events].sort().join(",") !== [...current.events].sort().join(",")) changes.events = fields.value.events;
  if (Object.keys(changes).length === 0) return { ok: false, problem: "Nothing to change." };
  return { ok: true, value: changes };
}
