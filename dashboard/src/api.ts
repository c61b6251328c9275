// The calls of this phase that the SDK has no method for yet: sign-out, connected apps,
// trust policies, service clients and webhooks. Same origin, same bearer (the session's), and a refusal arrives as the
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

export interface Webhook {
  id: string;
  workspaceId: string;
  url: string;
  /** Event types, or ["*"] for every type. */
  events: string[];
  enabled: boolean;
  description: string | null;
  createdAt: string;
  createdBy: string;
  /** When its deliveries began failing without a success since (null: not failing). */
  failingSince: string | null;
  /** Until when the secret before the last rotation still signs (null: no overlap). */
  previousSecretExpiresAt: string | null;
}

/** A webhook as created or rotated: with its signing secret, shown once. */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export interface NewWebhook {
  url: string;
  events: string[];
  description?: string;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  enabled?: boolean;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  /** The receiver's last HTTP status (null: no answer). */
  lastStatusCode: number | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** A path below a workspace: /v1/workspaces/{id}/{parts…}, each part encoded. */
function inWorkspace(workspaceId: string, ...parts: string[]): string {
  return ["/v1/workspaces", workspaceId, ...parts].map((part, at) => (at === 0 ? part : encodeURIComponent(part))).join("/");
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
    return ((await this.#send("GET", inWorkspace(workspaceId, "trust-policies"))) as { trustPolicies: TrustPolicy[] }).trustPolicies;
  }

  async createTrustPolicy(workspaceId: string, policy: NewTrustPolicy): Promise<TrustPolicy> {
    return (await this.#send("POST", inWorkspace(workspaceId, "trust-policies"), policy)) as TrustPolicy;
  }

  async deleteTrustPolicy(workspaceId: string, policyId: string): Promise<void> {
    await this.#send("DELETE", inWorkspace(workspaceId, "trust-policies", policyId));
  }

  async listServiceClients(workspaceId: string): Promise<ServiceClient[]> {
    return ((await this.#send("GET", inWorkspace(workspaceId, "service-clients"))) as { serviceClients: ServiceClient[] }).serviceClients;
  }

  async createServiceClient(workspaceId: string, client: NewServiceClient): Promise<ServiceClient> {
    return (await this.#send("POST", inWorkspace(workspaceId, "service-clients"), client)) as ServiceClient;
  }

  async deleteServiceClient(workspaceId: string, clientId: string): Promise<void> {
    await this.#send("DELETE", inWorkspace(workspaceId, "service-clients", clientId));
  }

  async listWebhooks(workspaceId: string): Promise<Webhook[]> {
    return ((await this.#send("GET", inWorkspace(workspaceId, "webhooks"))) as { webhooks: Webhook[] }).webhooks;
  }

  async createWebhook(workspaceId: string, webhook: NewWebhook): Promise<WebhookWithSecret> {
    return (await this.#send("POST", inWorkspace(workspaceId, "webhooks"), webhook)) as WebhookWithSecret;
  }

  async updateWebhook(workspaceId: string, webhookId: string, changes: WebhookChanges): Promise<Webhook> {
    return (await this.#send("PATCH", inWorkspace(workspaceId, "webhooks", webhookId), changes)) as Webhook;
  }

  async rotateWebhookSecret(workspaceId: string, webhookId: string): Promise<WebhookWithSecret> {
    return (await this.#send("POST", inWorkspace(workspaceId, "webhooks", webhookId, "rotate-secret"))) as WebhookWithSecret;
  }

  async deleteWebhook(workspaceId: string, webhookId: string): Promise<void> {
    await this.#send("DELETE", inWorkspace(workspaceId, "webhooks", webhookId));
  }

  /** The newest deliveries (one page: the service keeps them 30 days). */
  async listDeliveries(workspaceId: string, webhookId: string): Promise<Delivery[]> {
    return ((await this.#send("GET", inWorkspace(workspaceId, "webhooks", webhookId, "deliveries"))) as { deliveries: Delivery[] }).deliveries;
  }

  async retryDelivery(workspaceId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
    return (await this.#send("POST", inWorkspace(workspaceId, "webhooks", webhookId, "deliveries", deliveryId, "retry"))) as Delivery;
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
