// `client.workspaces`: workspaces and their members (a user token, or an admin key holding
// `workspace:admin`). The owner adds and removes members by their `usr_` id.

import type { Transport } from "./transport.js";
import type { Member, Workspace } from "./types.js";

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

  /** A new workspace; the caller is its owner and first member. */
  async createWorkspace(name: string): Promise<Workspace> {
    if (typeof name !== "string" || name.trim() === "") throw new TypeError("name must be a non-empty string.");
    const answer = await this.#transport.request({
      method: "POST",
      path: WORKSPACES,
      body: { name },
      authenticated: true,
    });
    return answer.body as Workspace;
  }

  /** The workspaces the caller is a member of, each with the caller's `role`. */
  async listWorkspaces(): Promise<Workspace[]> {
    const answer = await this.#transport.request({ method: "GET", path: WORKSPACES, authenticated: true });
    return (answer.body as { workspaces: Workspace[] }).workspaces;
  }

  /** The members of a workspace the caller belongs to. */
  async listMembers(workspaceId: string): Promise<Member[]> {
    const answer = await this.#transport.request({
      method: "GET",
      path: membersPath(workspaceId),
      authenticated: true,
    });
    return (answer.body as { members: Member[] }).members;
  }

  /** Adds a user (`usr_…`) to a workspace the caller owns; adding a member again is no error. */
  async addMember(workspaceId: string, userId: string): Promise<Member> {
    const answer = await this.#transport.request({
      method: "PUT",
      path: membersPath(workspaceId, userId),
      authenticated: true,
    });
    return answer.body as Member;
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
