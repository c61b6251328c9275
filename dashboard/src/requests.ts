// What the forms send: their fields turned into the SDK's inputs, checked the way the
// service will check them so that a person hears about a typo before a round trip.
// Optional fields are sent only when filled in.

import type { ApiKeyUpdate, DataPlaneScope, NewApiKey, RotateOptions, Scope } from "memory-sdk";

export const DATA_PLANE_SCOPES: readonly DataPlaneScope[] = ["memory", "entities", "reasoning", "ontology", "skills"];
export const ADMIN_SCOPE = "workspace:admin";
export const MAX_LIFETIME_DAYS = 90;

export interface NewKeyForm {
  label: string;
  category: "workspace" | "admin";
  workspaceId: string;
  scopes: readonly string[];
  /** The lifetime field as typed: empty means the service's default (90 days). */
  lifetimeDays: string;
  /** The allow-list field as typed: CIDRs separated by commas, spaces or new lines. */
  allowedCidrs: string;
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
  const optional: { expiresInDays?: number; allowedCidrs?: string[] } = {};
  if (days.value !== undefined) optional.expiresInDays = days.value;
  if (cidrs.length > 0) optional.allowedCidrs = cidrs;
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
  current: { label: string; allowedCidrs?: string[] | null },
  form: { label: string; allowedCidrs?: string },
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
  if (Object.keys(changes).length === 0) return { ok: false, problem: "Nothing to change." };
  return { ok: true, value: changes };
}
