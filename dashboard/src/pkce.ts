// OpenID Connect authorization code + PKCE (RFC 7636) at the login provider, done by
// oauth4webapi: the provider's discovery, the values a tab keeps while the person is away,
// the authorization URL, and the checks on the way back: our state, the provider's `iss`
// (RFC 9207: required when its metadata promises it), then the token endpoint's ID token
// (issuer, audience, expiry, our nonce; the service verifies its signature at the exchange).

import * as oauth from "oauth4webapi";

/** What the sign-in uses of the provider's discovery document. */
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  authorization_response_iss_parameter_supported?: boolean;
}

/** What the tab remembers between leaving for the provider and coming back. */
export interface PendingSignIn {
  verifier: string;
  state: string;
  nonce: string;
  redirectUri: string;
  server: ProviderMetadata;
}

/** The requests' transport: the page's `fetch`, or a test's. */
export type Fetch = (url: string, init: oauth.CustomFetchOptions<string, URLSearchParams | undefined>) => Promise<Response>;

const ID_TOKEN_ALGORITHM = "RS256"; // the only one the service's exchange accepts
const CLOCK_TOLERANCE = 60; // seconds, as the service allows: a tab's clock may be off a little

export class SignInError extends Error {
  override name = "SignInError";
}

function options<Method, Body>(url: string, transport: Fetch | undefined): oauth.HttpRequestOptions<Method, Body> {
  // Plain http reaches only a loopback development provider: the service refuses any other.
  const chosen: oauth.HttpRequestOptions<Method, Body> = { [oauth.allowInsecureRequests]: new URL(url).protocol === "http:" };
  if (transport !== undefined) chosen[oauth.customFetch] = transport as NonNullable<typeof chosen[typeof oauth.customFetch]>;
  return chosen;
}

function client(clientId: string): oauth.Client {
  return { client_id: clientId, id_token_signed_response_alg: ID_TOKEN_ALGORITHM, [oauth.clockTolerance]: CLOCK_TOLERANCE };
}

function asServer(server: ProviderMetadata): oauth.AuthorizationServer {
  return { ...server, id_token_signing_alg_values_supported: [ID_TOKEN_ALGORITHM] };
}

/** The provider's metadata from its discovery document (`tokenEndpoint`: a configured one). */
export async function discover(issuer: string, tokenEndpoint?: string, transport?: Fetch): Promise<ProviderMetadata> {
  let document: oauth.AuthorizationServer;
  try {
    const url = new URL(issuer);
    document = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, options(issuer, transport)));
  } catch (error) {
    if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      throw new SignInError("The login provider's discovery document does not match its configuration.");
    }
    throw new SignInError("The login provider could not be reached. Try again in a moment.");
  }
  const { authorization_endpoint: authorize, token_endpoint: token } = document;
  // Exactly the configured issuer: the ID token's `iss` must be it, to the character.
  if (document.issuer !== issuer || typeof authorize !== "string" || typeof token !== "string") {
    throw new SignInError("The login provider's discovery document does not match its configuration.");
  }
  return {
    issuer,
    authorization_endpoint: authorize,
    token_endpoint: tokenEndpoint ?? token,
    authorization_response_iss_parameter_supported: document.authorization_response_iss_parameter_supported === true,
  };
}

/** Fresh random values for one sign-in at `server`, coming back to `redirectUri`. */
export function newSignIn(server: ProviderMetadata, redirectUri: string): PendingSignIn {
  return {
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    redirectUri,
    server,
  };
}

export async function authorizationUrl(clientId: string, pending: PendingSignIn): Promise<string> {
  const url = new URL(pending.server.authorization_endpoint);
  const parameters = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: pending.redirectUri,
    scope: "openid email profile",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: "S256",
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.toString();
}

/** The provider's answer, after the checks that tie it to this tab's request and provider. */
export function checkedAnswer(parameters: URLSearchParams, pending: PendingSignIn | null, clientId: string): URLSearchParams {
  if (pending === null) {
    throw new SignInError("This sign-in was not started in this tab (or was already used). Sign in again.");
  }
  let checked: URLSearchParams;
  try {
    checked = oauth.validateAuthResponse(asServer(pending.server), client(clientId), parameters, pending.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new SignInError(`The login provider refused the sign-in: ${error.error_description ?? error.error}.`);
    }
    if (error instanceof oauth.OperationProcessingError && error.message.includes('"iss"')) {
      // RFC 9207: an answer from another provider than the one we asked (or without the
      // `iss` it promised to send) is a mix-up attack.
      throw new SignInError("The sign-in answer did not come from the login provider (iss). Sign in again.");
    }
    throw new SignInError("The sign-in answer does not match the request (state). Sign in again.");
  }
  const code = checked.get("code");
  if (code === null || code === "") throw new SignInError("The login provider sent no code. Sign in again.");
  return checked;
}

/** The ID token for a checked answer's code, from the provider's token endpoint. */
export async function redeem(
  checked: URLSearchParams,
  pending: PendingSignIn,
  clientId: string,
  transport?: Fetch,
): Promise<string> {
  const server = asServer(pending.server);
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(
      server,
      client(clientId),
      oauth.None(),
      checked,
      pending.redirectUri,
      pending.verifier,
      options(pending.server.token_endpoint, transport),
    );
  } catch {
    throw new SignInError("The login provider could not be reached to finish the sign-in. Sign in again.");
  }
  try {
    const answer = await oauth.processAuthorizationCodeResponse(server, client(clientId), response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    return answer.id_token as string;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      throw new SignInError(`The login provider did not finish the sign-in: ${error.error_description ?? error.error}`);
    }
    if (error instanceof oauth.OperationProcessingError && error.message.includes('"nonce"')) {
      throw new SignInError("The ID token was not issued for this sign-in (nonce). Sign in again.");
    }
    // Never the error's own text: its cause holds the provider's answer, tokens included.
    throw new SignInError("The login provider sent no usable ID token. Sign in again.");
  }
}
