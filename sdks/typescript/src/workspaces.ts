// `client.workspaces`: workspaces and their members (a user token, or an admin key holding
// `workspace:admin`). The owner adds and removes members by their `usr_` id or by the verified
// email they signed in with.

import type { Transport } from "./transport.js";
import { newIdempotencyKey } from "./retry.js";
import type { CreateWorkspaceOptions, Member, WireSchemas, Workspace } from "./types.js";

const WORKSPACES = "/v1/workspaces";

function segment(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new TypeError(`${name} must be a non-empty string.`);
  }
  return encodeURIComponent(value);
}

function membersPath(workspaceId: string, userIdOrEmail?: string): string {
  const base = `${WORKSPACES}/${segment(workspaceId, "workspaceId")}/members`;
  return userIdOrEmail === undefined ? base : `${base}/${segment(userIdOrEmail, "userIdOrEmail")}`;
}

function serviceClientsPath(workspaceId: string, clientId?: string): string {
  const base = `${WORKSPACES}/${segment(workspaceId, "workspaceId")}/service-clients`;
  return clientId === undefined ? base : `${base}/${segment(clientId, "clientId")}`;
}

export type NewServiceClient = WireSchemas["NewServiceClient"];
export type ServiceClient = WireSchemas["ServiceClient"];

export class WorkspacesClient {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * A new workspace; the caller is its owner and first member. Sent with an Idempotency-Key,
   * so it is retried like a read: however often it is sent, one workspace is created.
   */
  async createWorkspace(name: string, options: CreateWorkspaceOptions = {}): Promise<Workspace> {
    if (typeof name !== "string" || name.trim() === "") throw new TypeError("name must be a non-empty string.");
    const answer = await this.#transport.request({
      method: "POST",
      path: WORKSPACES,
      body: { name } satisfies WireSchemas["NewWorkspace"],
      authenticated: true,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
    const workspace: Workspace = answer.body as WireSchemas["Workspace"];
    return workspace;
  }

  /** The workspaces the caller is a member of, each with the caller's `role`. */
  async listWorkspaces(): Promise<Workspace[]> {
    const answer = await this.#transport.request({ method: "GET", path: WORKSPACES, authenticated: true });
    const workspaces: Workspace[] = (answer.body as WireSchemas["WorkspaceList"]).workspaces;
    return workspaces;
  }

  /** The members of a workspace the caller belongs to, with their emails and names. */
  async listMembers(workspaceId: string): Promise<Member[]> {
    const answer = await this.#transport.request({
      method: "GET",
      path: membersPath(workspaceId),
      authenticated: true,
    });
    const members: Member[] = (answer.body as WireSchemas["MemberList"]).members;
    return members;
  }

  /**
   * Adds a user (`usr_…`, or the verified email they signed in with) to a workspace the
   * caller owns; adding a member again is no error. An email nobody signed in with is a
   * NotFoundError (`user_not_found`): they must sign in once first.
   */
  async addMember(workspaceId: string, userIdOrEmail: string): Promise<Member> {
    const answer = await this.#transport.request({
      method: "PUT",
      path: membersPath(workspaceId, userIdOrEmail),
      authenticated: true,
    });
    const member: Member = answer.body as WireSchemas["Member"];
    return member;
  }

  /**
   * Removes a member from a workspace the caller owns; that member's keys for it stop
   * working on their next request. The owner cannot remove itself (ConflictError, 409).
   */
  async removeMember(workspaceId: string, userIdOrEmail: string): Promise<void> {
    await this.#transport.request({
      method: "DELETE",
      path: membersPath(workspaceId, userIdOrEmail),
      authenticated: true,
    });
  }

  /**
   * Registers a machine in a workspace the caller owns, with its public keys (`jwks`) or
   * where it publishes them (`jwksUri`): its `clientId` is what ServiceClientCredentials
   * signs as. At most 20 per workspace (ConflictError, `limit_reached`).
   */
  async createServiceClient(workspaceId: string, client: NewServiceClient): Promise<ServiceClient> {
    const answer = await this.#transport.request({
      method: "POST",
      path: serviceClientsPath(workspaceId),
      body: client,
      authenticated: true,
    });
    return answer.body as ServiceClient;
  }

  /** A workspace's service clients, in creation order (owner only). */
  async listServiceClients(workspaceId: string): Promise<ServiceClient[]> {
    const answer = await this.#transport.request({
      method: "GET",
      path: serviceClientsPath(workspaceId),
      authenticated: true,
    });
    return (answer.body as WireSchemas["ServiceClientList"]).serviceClients;
  }

  async getServiceClient(workspaceId: string, clientId: string): Promise<ServiceClient> {
    const answer = await this.#transport.request({
      method: "GET",
      path: serviceClientsPath(workspaceId, clientId),
      authenticated: true,
    });
    return answer.body as ServiceClient;
  }

  /** Deletes a service client: its tokens are refused on their next request. */
  async deleteServiceClient(workspaceId: string, clientId: string): Promise<void> {
    await this.#transport.request({
      method: "DELETE",
      path: serviceClientsPath(workspaceId, clientId),
      authenticated: true,
    });
  }
}
