// OpenID Connect authorization code + PKCE (RFC 7636), the parts without I/O: random
// values, the S256 challenge, the authorization URL, and the checks on the way back.

/** base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A random URL-safe string carrying `bytes` bytes of entropy (32 -> 43 characters). */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** What the tab remembers between leaving for the provider and coming back. */
export interface PendingSignIn {
  verifier: string;
  state: string;
  nonce: string;
  issuer: string;
  tokenEndpoint: string;
  redirectUri: string;
}

export function authorizationUrl(
  endpoint: string,
  clientId: string,
  pending: PendingSignIn,
  challenge: string,
): string {
  const url = new URL(endpoint);
  const parameters = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: pending.redirectUri,
    scope: "openid email profile",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.toString();
}

export class SignInError extends Error {
  override name = "SignInError";
}

/** The code of a provider's answer, after the checks that tie it to this tab's request. */
export function callbackCode(parameters: URLSearchParams, pending: PendingSignIn | null): string {
  if (pending === null) {
    throw new SignInError("This sign-in was not started in this tab (or was already used). Sign in again.");
  }
  if (parameters.get("state") !== pending.state) {
    throw new SignInError("The sign-in answer does not match the request (state). Sign in again.");
  }
  const issuer = parameters.get("iss");
  if (issuer !== null && issuer !== pending.issuer) {
    // RFC 9207: an answer from another provider than the one we asked is a mix-up attack.
    throw new SignInError("The sign-in answer came from another provider. Sign in again.");
  }
  const error = parameters.get("error");
  if (error !== null) {
    const description = parameters.get("error_description");
    throw new SignInError(`The login provider refused the sign-in: ${description ?? error}.`);
  }
  const code = parameters.get("code");
  if (code === null || code === "") throw new SignInError("The login provider sent no code. Sign in again.");
  return code;
}

/** The ID token's claims, unverified: only to check our nonce (the service verifies the rest). */
export function idTokenClaims(idToken: string): Record<string, unknown> {
  const payload = idToken.split(".")[1];
  if (payload === undefined) throw new SignInError("The login provider sent no usable ID token.");
  try {
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(json, (c) => c.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof claims === "object" && claims !== null) return claims as Record<string, unknown>;
  } catch {
    // Falls through to the refusal below: the text of a token never goes into a message.
  }
  throw new SignInError("The login provider sent no usable ID token.");
}

export function checkNonce(idToken: string, pending: PendingSignIn): void {
  if (idTokenClaims(idToken)["nonce"] !== pending.nonce) {
    throw new SignInError("The ID token was not issued for this sign-in (nonce). Sign in again.");
  }
}
