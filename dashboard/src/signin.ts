// Sign-in at the stage's login provider: authorization code + PKCE in the browser (the
// protocol is `pkce.ts`), then the provider's ID token is exchanged for this service's
// tokens (through the SDK).

import { MemoryClient, type TokenSet } from "memory-sdk";

import type { LoginProvider } from "./config.js";
import { authorizationUrl, checkedAnswer, discover, newSignIn, redeem, SignInError } from "./pkce.js";
import { savePending, takePending } from "./storage.js";

/** Leaves for the provider's sign-in page; the tab comes back to `redirectUri`. */
export async function beginSignIn(provider: LoginProvider, redirectUri: string): Promise<void> {
  const pending = newSignIn(await discover(provider.issuer, provider.tokenEndpoint), redirectUri);
  savePending(pending);
  window.location.assign(await authorizationUrl(provider.clientId, pending));
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
  const checked = checkedAnswer(parameters, pending, provider.clientId);
  if (pending === null) throw new SignInError("Sign in again.");
  return service.auth.exchange(await redeem(checked, pending, provider.clientId));
}
