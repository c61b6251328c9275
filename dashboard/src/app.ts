// The signed-in dashboard: the header (workspace switcher, who is signed in, sign-out),
// the section links, and the section on show. One MemoryClient does every API call; its
// tokens come from the SDK's Session, which refreshes them before they expire.

import { ApiError, MemoryClient, NotFoundError, Session, type Principal, type SessionTokens, type Workspace } from "memory-sdk";

import { Api } from "./api.js";
import type { Context } from "./context.js";
import { announce, h, replace } from "./dom.js";
import { ANSWER_BUDGET_MS, PROGRESS_AFTER_MS, problemText, sessionEnded, signInAgain, TimedOut } from "./format.js";
import { loadChoice, saveChoice, saveTokens } from "./storage.js";
import { renderActivity } from "./views/activity.js";
import { renderConnectedApps } from "./views/connected.js";
import { renderKeys } from "./views/keys.js";
import { renderServiceClients } from "./views/service-clients.js";
import { renderSessions } from "./views/sessions.js";
import { renderTrustPolicies } from "./views/trust.js";
import { renderWebhooks } from "./views/webhooks.js";
import { renderWorkspaces } from "./views/workspaces.js";

export const SECTIONS = [
  { id: "keys", title: "API keys", render: renderKeys },
  { id: "workspaces", title: "Workspaces", render: renderWorkspaces },
  { id: "activity", title: "Activity", render: renderActivity },
  { id: "apps", title: "Connected apps", render: renderConnectedApps },
  { id: "trust", title: "Trust policies", render: renderTrustPolicies },
  { id: "machines", title: "Service clients", render: renderServiceClients },
  { id: "webhooks", title: "Webhooks", render: renderWebhooks },
  { id: "sessions", title: "Sessions", render: renderSessions },
] as const;

/** Why the dashboard signed out, shown on the sign-in screen; undefined for a plain sign-out. */
export type SignOut = (reason?: string) => void;

export class App implements Context {
  readonly client: MemoryClient;
  /** The calls the SDK has no method for yet (connected apps, trust policies, service clients, webhooks). */
  readonly api: Api;
  me: Principal | undefined;
  workspaces: Workspace[] = [];
  /** The switcher's choice: a workspace id, or null for every workspace. */
  current: string | null = null;
  readonly #session: Session;
  readonly #root: HTMLElement;
  readonly #signOut: SignOut;
  readonly #onHashChange = (): void => this.show();
  #main: HTMLElement | undefined;
  #switcher: HTMLSelectElement | undefined;
  #progress: HTMLElement | undefined;
  #pending = 0;
  #stopped = false;

  constructor(root: HTMLElement, endpoint: string, tokens: SessionTokens, signOut: SignOut) {
    this.#root = root;
    this.#signOut = signOut;
    // The session refreshes through a client of its own, which needs no credential.
    this.#session = new Session({
      client: new MemoryClient({ endpoint }),
      tokens,
      onRefresh: (fresh) => {
        if (!this.#stopped) saveTokens(fresh);
      },
    });
    this.client = new MemoryClient({ endpoint, tokenProvider: this.#session.tokenProvider });
    this.api = new Api(endpoint, this.#session.tokenProvider);
  }

  /** Signs this tab out, as the header's Sign out does; `reason` is shown on the sign-in screen. */
  endThisSession(reason?: string): void {
    if (!this.#stopped) this.#signOut(reason);
  }

  /** The session's current refresh token: what sign-out revokes. */
  get refreshToken(): string {
    return this.#session.tokens.refreshToken;
  }

  async start(): Promise<void> {
    this.me = await this.call(() => this.client.auth.whoami());
    // The switcher's last choice in this tab, kept across a reload (if still one of theirs).
    this.current = loadChoice();
    await this.loadWorkspaces();
    this.#renderShell();
    window.addEventListener("hashchange", this.#onHashChange);
    this.show();
  }

  stop(): void {
    this.#stopped = true;
    window.removeEventListener("hashchange", this.#onHashChange);
  }

  /**
   * Runs an API call. Progress shows once it has taken PROGRESS_AFTER_MS; past the service's
   * failure budget (ANSWER_BUDGET_MS) it fails with TimedOut, so that the screen offers to
   * try again instead of waiting. When the session has ended for good (its refresh token was
   * refused), the dashboard signs out and says why; the error still reaches the caller.
   */
  async call<T>(work: () => Promise<T>): Promise<T> {
    this.#pending += 1;
    const progress = window.setTimeout(() => this.#showProgress(), PROGRESS_AFTER_MS);
    let budget: number | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      budget = window.setTimeout(() => reject(new TimedOut()), ANSWER_BUDGET_MS);
    });
    try {
      return await Promise.race([work(), timedOut]);
    } catch (error) {
      if (this.#session.ended && !this.#stopped) {
        this.#signOut(signInAgain(sessionEnded(problemText(error))));
      }
      if (this.#lostWorkspace(error)) void this.#recheckWorkspace();
      throw error;
    } finally {
      window.clearTimeout(progress);
      window.clearTimeout(budget);
      this.#pending -= 1;
      if (this.#pending === 0 && this.#progress !== undefined) this.#progress.hidden = true;
    }
  }

  #showProgress(): void {
    if (this.#progress !== undefined && this.#pending > 0) this.#progress.hidden = false;
  }

  async loadWorkspaces(): Promise<void> {
    this.workspaces = await this.call(() => this.client.workspaces.listWorkspaces());
    if (this.current !== null && !this.workspaces.some((w) => w.id === this.current)) this.#setCurrent(null);
    this.#fillSwitcher();
  }

  #setCurrent(workspaceId: string | null): void {
    this.current = workspaceId;
    saveChoice(workspaceId);
  }

  /** A refusal that may mean the chosen workspace is no longer this person's: not a member
   * (403), or not found (404) while a workspace is chosen. */
  #lostWorkspace(error: unknown): boolean {
    if (this.current === null || this.#rechecking) return false;
    return error instanceof NotFoundError || (error instanceof ApiError && error.code === "not_a_member");
  }

  #rechecking = false;

  /** Lists the workspaces again after such a refusal: one this person was removed from
   * leaves the switcher, and the section is drawn again without its stale actions. */
  async #recheckWorkspace(): Promise<void> {
    const chosen = this.current;
    this.#rechecking = true;
    try {
      await this.loadWorkspaces();
    } catch {
      return;
    } finally {
      this.#rechecking = false;
    }
    if (chosen !== null && this.current === null) {
      announce("You no longer have access to that workspace: showing every workspace.");
      this.show();
    }
  }

  /** How to name a person: their name, else their email, else their user id. */
  personName(person: { userId: string; email?: string | null; name?: string | null }): string {
    return person.name ?? person.email ?? person.userId;
  }

  workspaceName(id: string | null): string {
    if (id === null) return "—";
    return this.workspaces.find((w) => w.id === id)?.name ?? id;
  }

  /** Chooses a workspace in the switcher without drawing the section again. */
  pick(workspaceId: string | null): void {
    this.#setCurrent(workspaceId);
    if (this.#switcher !== undefined) this.#switcher.value = workspaceId ?? "";
  }

  /** Chooses a workspace in the switcher (and shows the section again for it). */
  choose(workspaceId: string | null): void {
    this.#setCurrent(workspaceId);
    if (this.#switcher !== undefined) this.#switcher.value = workspaceId ?? "";
    this.show();
  }

  #fillSwitcher(): void {
    const switcher = this.#switcher;
    if (switcher === undefined) return;
    replace(
      switcher,
      h("option", { value: "" }, "All workspaces"),
      ...this.workspaces.map((w) => h("option", { value: w.id }, this.#switcherName(w))),
    );
    switcher.value = this.current ?? "";
  }

  /** A workspace as the switcher lists it: its name, and its id too when another of the
   * person's workspaces has the same name. */
  #switcherName(workspace: Workspace): string {
    const same = this.workspaces.filter((w) => w.name === workspace.name).length;
    return same > 1 ? `${workspace.name} (${workspace.id})` : workspace.name;
  }

  #renderShell(): void {
    const me = this.me;
    const switcher = h("select", { id: "workspace-switcher" });
    switcher.addEventListener("change", () => {
      this.#setCurrent(switcher.value === "" ? null : switcher.value);
      announce(`Showing ${this.current === null ? "every workspace" : this.workspaceName(this.current)}.`);
      this.show();
    });
    this.#switcher = switcher;
    this.#fillSwitcher();
    this.#progress = h("p", { class: "progress", role: "status", id: "progress" }, "Working…");
    this.#progress.hidden = this.#pending === 0;
    const userId = me?.userId ?? "";
    const person = me as (Principal & { email?: string | null; name?: string | null }) | undefined;
    const copyId = h(
      "button",
      { type: "button", class: "link", id: "user-id", "data-user-id": userId, title: userId },
      "Copy user id",
    );
    copyId.addEventListener("click", () => {
      navigator.clipboard.writeText(userId).then(
        () => announce("Your user id was copied."),
        () => announce("Copying was blocked by the browser."),
      );
    });
    const email = person?.email ?? null;
    const shownName = person?.name ?? email ?? "you";
    const signOut = h("button", { type: "button", class: "secondary" }, "Sign out");
    signOut.addEventListener("click", () => this.#signOut());
    const nav = h(
      "nav",
      { "aria-label": "Sections" },
      h("ul", {}, ...SECTIONS.map((s) => h("li", {}, h("a", { href: `#${s.id}`, "data-section": s.id }, s.title)))),
    );
    const main = h("main", { id: "main", tabindex: "-1" });
    this.#main = main;
    // The fragment names the section, so the skip link moves the focus itself.
    const skip = h("a", { class: "skip", href: "#main" }, "Skip to content");
    skip.addEventListener("click", (event) => {
      event.preventDefault();
      main.focus();
    });
    replace(
      this.#root,
      skip,
      h(
        "header",
        { class: "topbar" },
        h("p", { class: "brand" }, "memory-auth"),
        h("div", { class: "switcher" }, h("label", { for: "workspace-switcher" }, "Workspace"), switcher),
        h(
          "div",
          { class: "who" },
          h("span", {}, "Signed in as "),
          h("strong", { class: "person", id: "who-name" }, shownName),
          email !== null && email !== shownName ? h("span", { class: "email" }, ` ${email}`) : null,
          copyId,
        ),
        signOut,
        this.#progress,
      ),
      nav,
      main,
    );
  }

  /** The section named by the address's fragment (#keys by default). */
  show(): void {
    const main = this.#main;
    if (main === undefined || this.#stopped) return;
    const wanted = window.location.hash.replace(/^#/, "");
    const section = SECTIONS.find((s) => s.id === wanted) ?? SECTIONS[0];
    for (const link of this.#root.querySelectorAll<HTMLAnchorElement>("nav a")) {
      if (link.dataset["section"] === section.id) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.title = `${section.title} · memory-auth dashboard`;
    // Drawn again from inside (a link such as "Create a workspace", a form's submit), the
    // focus would fall to <body>: it goes to the section's own first stop instead.
    const focused = document.activeElement;
    const fromInside = focused !== null && focused !== document.body && main.contains(focused);
    replace(main);
    section.render(this, main);
    if (fromInside && (document.activeElement === null || document.activeElement === document.body)) {
      (main.querySelector<HTMLElement>("[data-arrival-focus]") ?? main).focus();
    }
  }
}
