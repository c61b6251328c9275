// What the tab keeps: the token pair while signed in, and a pending sign-in while the
// person is at the provider. Only sessionStorage (this tab, gone when it closes); never
// localStorage, never cookies, never the URL.

import type { SessionTokens } from "memory-sdk";

import type { PendingSignIn } from "./pkce.js";

const PREFIX = "memory-dashboard.";
const TOKENS = `${PREFIX}tokens`;
const PENDING = `${PREFIX}pending-sign-in`;
const CHOICE = `${PREFIX}workspace`;

function read(name: string): unknown {
  const text = sessionStorage.getItem(name);
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    sessionStorage.removeItem(name);
    return null;
  }
}

export function loadTokens(): SessionTokens | null {
  const value = read(TOKENS) as Partial<SessionTokens> | null;
  if (
    value === null ||
    typeof value.accessToken !== "string" ||
    typeof value.refreshToken !== "string" ||
    typeof value.expiresAt !== "number"
  ) {
    return null;
  }
  return { accessToken: value.accessToken, refreshToken: value.refreshToken, expiresAt: value.expiresAt };
}

export function saveTokens(tokens: SessionTokens): void {
  const { accessToken, refreshToken, expiresAt } = tokens;
  sessionStorage.setItem(TOKENS, JSON.stringify({ accessToken, refreshToken, expiresAt }));
}

export function savePending(pending: PendingSignIn): void {
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
}

/** The pending sign-in, removed as it is read: a callback can be used once. */
export function takePending(): PendingSignIn | null {
  const value = read(PENDING) as PendingSignIn | null;
  sessionStorage.removeItem(PENDING);
  // One kept by an older page (before the provider's metadata was kept too) is not usable.
  return value !== null && typeof value.verifier === "string" && typeof value.server?.issuer === "string" ? value : null;
}

/** The workspace switcher's choice (a workspace id; null: every workspace), for a reload. */
export function saveChoice(workspaceId: string | null): void {
  if (workspaceId === null) sessionStorage.removeItem(CHOICE);
  else sessionStorage.setItem(CHOICE, workspaceId);
}

export function loadChoice(): string | null {
  return sessionStorage.getItem(CHOICE);
}

/** Everything this page ever stored in the tab. */
export function forgetAll(): void {
  for (let index = sessionStorage.length - 1; index >= 0; index -= 1) {
    const name = sessionStorage.key(index);
    if (name !== null && name.startsWith(PREFIX)) sessionStorage.removeItem(name);
  }
}
