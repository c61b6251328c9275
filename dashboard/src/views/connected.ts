// Connected apps: the MCP clients the person has allowed into a workspace (their grants, and
// consents remembered before any token was issued), with Disconnect: the app's tokens are
// refused from its next request, and it must ask again.

import type { ConnectedApp } from "../api.js";
import type { Context } from "../context.js";
import { confirmAction } from "../dialogs.js";
import { announce, append, errorArea, h, replace } from "../dom.js";
import { dateTime, problemText } from "../format.js";

/** A row of the list: a grant (tokens in force), or a remembered consent without one. */
type Listed = ConnectedApp & { kind?: "grant" | "consent" };

function isConsent(grant: Listed): boolean {
  return grant.kind === "consent";
}

/** How to name an app: the name it registered with, else its client id. */
export function appName(grant: Pick<ConnectedApp, "clientId" | "clientName">): string {
  const name = grant.clientName?.trim() ?? "";
  return name === "" ? grant.clientId : name;
}

export function renderConnectedApps(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list", "aria-live": "polite", "aria-busy": "true" });
  append(
    main,
    h("h1", {}, "Connected apps"),
    h(
      "p",
      { class: "intro" },
      "AI apps and agents you have allowed to use your memory through MCP. Each one works in the " +
        "workspace you chose when you allowed it, with the scopes shown. An app you allowed is listed at once, " +
        "before it has used its access, and your consent is remembered until you disconnect it. " +
        "Disconnect an app you no longer use.",
    ),
    errors.element,
    list,
  );

  let grants: Listed[] = [];

  async function load(refocus = false): Promise<void> {
    errors.clear();
    list.setAttribute("aria-busy", "true");
    try {
      grants = await app.call(() => app.api.listGrants());
      draw();
      if (refocus) (list.querySelector<HTMLElement>("table") ?? main).focus();
    } catch (error) {
      errors.show(problemText(error), () => void load(refocus));
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  }

  function draw(): void {
    if (grants.length === 0) {
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No connected apps"),
          h(
            "p",
            {},
            "When an MCP client (such as a desktop assistant or a coding agent) asks to use your memory, " +
              "you sign in and choose a workspace on this service's consent page. The apps you allow appear here, " +
              "and you can disconnect them at any time.",
          ),
        ),
      );
      return;
    }
    replace(
      list,
      h(
        "table",
        { class: "grants", tabindex: "-1" },
        h("caption", { class: "visually-hidden" }, "Apps connected to your memory"),
        h(
          "thead",
          {},
          h("tr", {}, ...["App", "Workspace", "Scopes", "Connected", "Last refreshed", "Actions"].map((t) => h("th", { scope: "col" }, t))),
        ),
        h("tbody", {}, ...grants.map(row)),
      ),
    );
  }

  function lastUsed(grant: Listed): HTMLElement | string {
    if (isConsent(grant)) {
      return h("span", {}, "No token in force", h("span", { class: "hint block" }, "your consent is remembered"));
    }
    return grant.lastUsedAt === null
      ? "no refresh yet"
      : h("span", {}, h("time", { datetime: grant.lastUsedAt }, dateTime(grant.lastUsedAt)), h("span", { class: "hint block" }, "its last token refresh"));
  }

  function row(grant: Listed): HTMLTableRowElement {
    const name = appName(grant);
    const disconnect = h(
      "button",
      { type: "button", class: "danger small", "aria-label": `Disconnect ${name}`, "data-action": "Disconnect" },
      "Disconnect",
    );
    disconnect.addEventListener("click", () => {
      errors.clear();
      void disconnectApp(grant).catch((error: unknown) => errors.show(problemText(error)));
    });
    return h(
      "tr",
      { "data-grant-id": grant.id, "data-kind": isConsent(grant) ? "consent" : "grant" },
      h("th", { scope: "row", "data-label": "App", class: "label" }, name, h("span", { class: "hint block" }, grant.clientId)),
      h("td", { "data-label": "Workspace", class: "wrap" }, app.workspaceName(grant.workspaceId)),
      h("td", { "data-label": "Scopes" }, grant.scopes.join(", ")),
      h("td", { "data-label": "Connected" }, h("time", { datetime: grant.createdAt }, dateTime(grant.createdAt))),
      h("td", { "data-label": "Last refreshed" }, lastUsed(grant)),
      h("td", { "data-label": "Actions", class: "row-actions" }, disconnect),
    );
  }

  async function disconnectApp(grant: Listed): Promise<void> {
    const name = appName(grant);
    const where = app.workspaceName(grant.workspaceId);
    const sure = await confirmAction({
      title: `Disconnect ${name}?`,
      message: isConsent(grant)
        ? `You allowed ${name} to use your memory in ${where}, and that is remembered. ` +
          "Disconnecting forgets it: the app must ask you again."
        : `${name} can no longer use your memory in ${where}: its tokens are refused ` +
          "from its next request. To use it again, connect it again from the app.",
      confirm: "Disconnect",
      danger: true,
    });
    if (!sure) return;
    await app.call(() => app.api.disconnect(grant.id));
    announce(`${name} disconnected.`);
    // The focus goes to the list, whose row is gone.
    await load(true);
  }

  void load();
}
