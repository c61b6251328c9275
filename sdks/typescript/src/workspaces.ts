// `client.workspaces`: workspaces and their members (a user token, or an admin key holding
// `workspace:admin`). The owner adds and removes members by their `usr_` id.

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

function membersPath(workspaceId: string, userId?: string): string {
  const base = `${WORKSPACES}/${segment(workspaceId, "workspaceId")}/members`;
  return userId === undefined ? base : `${base}/${segment(userId, "userId")}`;
}

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

  /** The members of a workspace the caller belongs to. */
  async listMembers(workspaceId: string): Promise<Member[]> {
    const answer = await this.#transport.request({
      method: "GET",
      path: membersPath(workspaceId),
      authenticated: true,
    });
    const members: Member[] = (answer.body as WireSchemas["MemberList"]).members;
    return members;
  }

  /** Adds a user (`usr_…`) to a workspace the caller owns; adding a member again is no error. */
  async addMember(workspaceId: string, userId: string): Promise<Member> {
    const answer = await this.#transport.request({
      method: "PUT",
      path: membersPath(workspaceId, userId),
      authenticated: true,
    });
    const member: Member = answer.body as WireSchemas["Member"];
    return member;
  }

  /**
   * Removes a member from a workspace the caller owns; that member's keys for it stop
   * working on their next request. The owner cannot remove itself (ConflictError, 409).
   */
  async removeMember(workspaceId: string, userId: string): Promise<void> {
    await this.#transport.request({
      method: "DELETE",
      path: membersPath(workspaceId, userId),
      authenticated: true,
    });
  }
}
