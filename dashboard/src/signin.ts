// Sign-in at the stage's login provider: authorization code + PKCE in the browser, then the
// provider's ID token is exchanged for this service's tokens (through the SDK).

import { MemoryClient, type TokenSet } from "memory-sdk";

import type { LoginProvider } from "./config.js";
import {
  authorizationUrl,
  callbackCode,
  checkNonce,
  randomToken,
  s256,
  SignInError,
  type PendingSignIn,
} from "./pkce.js";
import { savePending, takePending } from "./storage.js";

interface Discovery {
  issuer?: unknown;
  authorization_endpoint?: unknown;
  token_endpoint?: unknown;
}

async function discover(provider: LoginProvider): Promise<{ authorize: string; token: string }> {
  let document: Discovery;
  try {
    const response = await fetch(`${provider.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
    if (!response.ok) throw new Error(String(response.status));
    document = (await response.json()) as Discovery;
  } catch {
    throw new SignInError("The login provider could not be reached. Try again in a moment.");
  }
  const { issuer, authorization_endpoint: authorize, token_endpoint: token } = document;
  if (issuer !== provider.issuer || typeof authorize !== "string" || typeof token !== "string") {
    throw new SignInError("The login provider's discovery document does not match its configuration.");
  }
  return { authorize, token: provider.tokenEndpoint ?? token };
}

/** Leaves for the provider's sign-in page; the tab comes back to `redirectUri`. */
export async function beginSignIn(provider: LoginProvider, redirectUri: string): Promise<void> {
  const endpoints = await discover(provider);
  const pending: PendingSignIn = {
    verifier: randomToken(32),
    state: randomToken(16),
    nonce: randomToken(16),
    issuer: provider.issuer,
    tokenEndpoint: endpoints.token,
    redirectUri,
  };
  savePending(pending);
  window.location.assign(authorizationUrl(endpoints.authorize, provider.clientId, pending, await s256(pending.verifier)));
}

/** True when the address is the provider's answer (code or error) to a sign-in. */
export function isCallback(parameters: URLSearchParams): boolean {
  return parameters.has("state") && (parameters.has("code") || parameters.has("error"));
}

/** The provider's answer in `parameters` turned into this service's tokens. */
export async function finishSignIn(
  provider: LoginProvider,
  parameters: URLSearchParams,
  service: MemoryClient,
): Promise<TokenSet> {
  const pending = takePending();
  const code = callbackCode(parameters, pending);
  if (pending === null) throw new SignInError("Sign in again.");
  let answer: { id_token?: unknown; error?: unknown; error_description?: unknown };
  try {
    const response = await fetch(pending.tokenEndpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: pending.redirectUri,
        client_id: provider.clientId,
        code_verifier: pending.verifier,
      }),
    });
    answer = (await response.json()) as typeof answer;
  } catch {
    throw new SignInError("The login provider could not be reached to finish the sign-in. Sign in again.");
  }
  if (typeof answer.id_token !== "string") {
    const why = typeof answer.error_description === "string" ? answer.error_description : String(answer.error ?? "no ID token");
    throw new SignInError(`The login provider did not finish the sign-in: ${why}`);
  }
  checkNonce(answer.id_token, pending);
  return service.auth.exchange(answer.id_token);
}
