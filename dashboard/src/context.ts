// What a section (views/*.ts) may use of the signed-in dashboard: its API clients, who is
// signed in, the workspaces and the switcher's choice. app.ts implements it and imports
// every view; the views import only this, so that no module imports its own importer
// (test/imports.test.ts fails on any cycle).

import type { MemoryClient, Principal, Workspace } from "memory-sdk";

import type { Api } from "./api.js";

export interface Context {
  readonly client: MemoryClient;
  /** The calls the SDK has no method for yet (connected apps, trust policies, webhooks). */
  readonly api: Api;
  readonly me: Principal | undefined;
  readonly workspaces: readonly Workspace[];
  /** The switcher's choice: a workspace id, or null for every workspace. */
  readonly current: string | null;
  /** Runs an API call within the answer budget (ANSWER_BUDGET_MS), with progress shown. */
  call<T>(work: () => Promise<T>): Promise<T>;
  /** Lists the person's workspaces again (the switcher too). */
  loadWorkspaces(): Promise<void>;
  /** Signs this tab out; `reason` is shown on the sign-in screen. */
  endThisSession(reason?: string): void;
  personName(person: { userId: string; email?: string | null; name?: string | null }): string;
  workspaceName(id: string | null): string;
  /** Chooses a workspace in the switcher without drawing the section again. */
  pick(workspaceId: string | null): void;
  /** Chooses a workspace in the switcher and draws the section again for it. */
  choose(workspaceId: string | null): void;
}
