// The calls of this phase that the SDK has no method for yet: sign-out, connected apps and
// trust policies. Same origin, same bearer (the session's), and a refusal arrives as the
// SDK's ApiError, so that every screen words it through problemText.

import { ApiError, NetworkError, type TokenProvider } from "memory-sdk";

export interface ConnectedApp {
  id: string;
  clientId: string;
  clientName: string | null;
  workspaceId: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface TrustPolicy {
  id: string;
  workspaceId: string;
  name: string;
  issuer: string;
  audience: string;
  subject: string;
  claims: Record<string, string>;
  scopes: string[];
  maxLifetimeSeconds: number;
  createdAt: string;
  createdBy: string;
}

export interface NewTrustPolicy {
  name: string;
  issuer: string;
  audience: string;
  subject: string;
  claims?: Record<string, string>;
  scopes: string[];
  maxLifetimeSeconds?: number;
}

export interface ServiceClient {
  clientId: string;
  workspaceId: string;
  name: string;
  scopes: string[];
  jwks: { keys: Record<string, unknown>[] } | null;
  jwksUri: string | null;
  tokenEndpoint: string;
  createdAt: string;
  createdBy: string;
}

export interface NewServiceClient {
  name: string;
  scopes: string[];
  jwks?: { keys: unknown[] };
  jwksUri?: string;
}

export class Api {
  readonly #endpoint: string;
  readonly #token: TokenProvider;

  constructor(endpoint: string, token: TokenProvider) {
    this.#endpoint = endpoint;
    this.#token = token;
  }

  async #send(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = {
      Accept: "application/json",
      Authorization: `Bearer ${await this.#token({})}`,
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(`${this.#endpoint}${path}`, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
      });
    } catch {
      throw new NetworkError("The service could not be reached.", { mayHaveReached: method !== "GET" });
    }
    return answer(response);
  }

  async listGrants(): Promise<ConnectedApp[]> {
    const body = (await this.#send("GET", "/v1/oauth/grants")) as { grants: ConnectedApp[] };
    return body.grants;
  }

  async disconnect(grantId: string): Promise<void> {
    await this.#send("DELETE", `/v1/oauth/grants/${encodeURIComponent(grantId)}`);
  }

  async listTrustPolicies(workspaceId: string): Promise<TrustPolicy[]> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/trust-policies`;
    return ((await this.#send("GET", path)) as { trustPolicies: TrustPolicy[] }).trustPolicies;
  }

  async createTrustPolicy(workspaceId: string, policy: NewTrustPolicy): Promise<TrustPolicy> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/trust-policies`;
    return (await this.#send("POST", path, policy)) as TrustPolicy;
  }

  async listServiceClients(workspaceId: string): Promise<ServiceClient[]> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/service-clients`;
    return ((await this.#send("GET", path)) as { serviceClients: ServiceClient[] }).serviceClients;
  }

  async createServiceClient(workspaceId: string, client: NewServiceClient): Promise<ServiceClient> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/service-clients`;
    return (await this.#send("POST", path, client)) as ServiceClient;
  }

  async deleteServiceClient(workspaceId: string, clientId: string): Promise<void> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/service-clients/${encodeURIComponent(clientId)}`;
    await this.#send("DELETE", path);
  }

  async deleteTrustPolicy(workspaceId: string, policyId: string): Promise<void> {
    const path = `/v1/workspaces/${encodeURIComponent(workspaceId)}/trust-policies/${encodeURIComponent(policyId)}`;
    await this.#send("DELETE", path);
  }
}

async function answer(response: Response): Promise<unknown> {
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (response.ok) return body;
  const text = (name: string): string | undefined => (typeof body?.[name] === "string" ? (body[name] as string) : undefined);
  throw new ApiError({
    status: response.status,
    code: text("code") ?? text("error") ?? "unexpected_response",
    detail: text("detail") ?? text("error_description"),
  });
}

/**
 * Sign-out: the login refresh token's whole family is revoked (always 200, even for a token
 * the service no longer knows). Returns false when the service could not be told.
 */
export async function revokeRefreshToken(endpoint: string, refreshToken: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/v1/auth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ token: refreshToken }),
    });
    return response.ok;
  } catch {
    return false;
  }
}
