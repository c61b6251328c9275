// Activity: the audit events of the user's keys and of the workspaces they own, newest
// first, for services that record them. Keys are named by their labels and people by their
// names; the workspace switcher and the filters (type, key) narrow the list.

import type { ApiKey, AuditEvent } from "memory-sdk";
import { NotFoundError } from "memory-sdk";

import type { Context } from "../context.js";
import { append, errorArea, h, replace, words } from "../dom.js";
import { dateTime, eventName, EVENT_TYPES, problemText } from "../format.js";

const PAGE_SIZE = 25;

/** How a sign-in ended (a `session.revoked` event's `reason`), in words. */
const SIGN_IN_ENDINGS: Readonly<Record<string, string>> = {
  sign_out: "by signing out",
  ended: "from the Sessions list",
  everywhere: "by Sign out everywhere",
  reuse_detected: "a used refresh token was presented again",
};

/** A `key.updated` event's changed fields, in words. */
const CHANGED_FIELDS: Readonly<Record<string, string>> = {
  label: "label",
  allowedCidrs: "allowed addresses",
  requestsPerDay: "daily quota",
};

/** An actor as services that name people answer: with the person's email and name. */
type Actor = { userId?: string; credential?: string; keyId?: string | null; email?: string | null; name?: string | null; system?: string };

export function renderActivity(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list", "aria-busy": "true", "aria-live": "polite" });
  const more = h("button", { type: "button", class: "secondary" }, "Load more events");
  more.hidden = true;
  let events: AuditEvent[] = [];
  let cursor: string | null = null;
  let labels = new Map<string, ApiKey>();
  more.addEventListener("click", () => void load(false));

  const typeFilter = h(
    "select",
    { id: "event-type" },
    h("option", { value: "" }, "Every event"),
    ...EVENT_TYPES.map((type) => h("option", { value: type }, eventName(type))),
  );
  const keyFilter = h("select", { id: "event-key" }, h("option", { value: "" }, "Every key"));
  typeFilter.addEventListener("change", () => void load(true));
  keyFilter.addEventListener("change", () => void load(true));
  const where = app.current === null ? "every workspace" : app.workspaceName(app.current);

  append(
    main,
    h("h1", {}, "Activity"),
    h(
      "p",
      { class: "intro" },
      "Every change to your keys and to the workspaces you own: who did it, when, and from where. ",
      h("span", {}, `Showing ${where}.`),
    ),
    h(
      "div",
      { class: "toolbar" },
      h(
        "div",
        { class: "filters" },
        h("div", { class: "field inline" }, h("label", { for: "event-type" }, "Event"), typeFilter),
        h("div", { class: "field inline" }, h("label", { for: "event-key" }, "Key"), keyFilter),
      ),
    ),
    errors.element,
    list,
    more,
  );

  function keyName(id: string | null | undefined): string {
    if (id === null || id === undefined) return "—";
    const key = labels.get(id);
    return key === undefined ? "a key no longer listed" : `“${key.label}” (${key.hint ?? "…"})`;
  }

  function actor(event: AuditEvent): string {
    const who = event.actor as Actor;
    if (who.system !== undefined) {
      return who.system === "expiry" ? "the service (expiry)" : `the service (${who.system.replace(/-/g, " ")})`;
    }
    const me = who.userId === app.me?.userId;
    const person = me ? "you" : (who.name ?? who.email ?? "someone whose name is not known");
    const via = who.credential === "api_key" ? ` with ${keyName(who.keyId)}` : "";
    return `${person}${via}`;
  }

  /** What the event's data says, in words. */
  function what(event: AuditEvent): string {
    const data = (event.data ?? {}) as Record<string, unknown>;
    const person = (): string => {
      const name = typeof data["name"] === "string" ? data["name"] : null;
      const email = typeof data["email"] === "string" ? data["email"] : null;
      if (name !== null && email !== null) return `${name} (${email})`;
      return name ?? email ?? "someone whose name is not known";
    };
    // A trust policy by its name (recorded with the event since names are), else its id.
    const policy = (): string => {
      if (typeof data["name"] === "string") return `trust policy “${data["name"]}”`;
      return typeof data["policyId"] === "string" ? `trust policy ${data["policyId"]}` : "a trust policy";
    };
    switch (event.type) {
      case "member.added":
        return `${person()} joined`;
      case "member.removed":
        return `${person()} was removed`;
      case "key.rotated":
        return typeof data["successorId"] === "string" ? `replaced by ${keyName(data["successorId"])}` : "";
      case "key.created":
        return typeof data["label"] === "string" ? `labelled “${data["label"]}”` : "";
      case "key.updated":
        return Array.isArray(data["changed"]) ? `changed: ${data["changed"].map((field) => CHANGED_FIELDS[String(field)] ?? String(field)).join(", ")}` : "";
      case "workspace.created":
        return typeof data["name"] === "string" ? `named “${data["name"]}”` : "";
      case "session.revoked":
        return SIGN_IN_ENDINGS[String(data["reason"])] ?? "";
      case "webhook.created":
      case "webhook.updated":
      case "webhook.secret_rotated":
      case "webhook.deleted":
      case "webhook.disabled":
        return typeof data["url"] === "string" ? `to ${data["url"]}` : "";
      case "service_client.created":
      case "service_client.deleted":
      case "service_client.token_issued": {
        const name = typeof data["name"] === "string" ? `“${data["name"]}”` : "a machine";
        const id = typeof data["clientId"] === "string" ? ` (${data["clientId"]})` : "";
        if (event.type === "service_client.token_issued") return `${name}${id}, at most once an hour`;
        const scopes = Array.isArray(data["scopes"]) ? `, scopes: ${data["scopes"].join(", ")}` : "";
        return `${name}${id}${scopes}`;
      }
      case "key.expiring":
      case "key.expired":
        return typeof data["label"] === "string" ? `“${data["label"]}”` : "";
      case "key.leaked":
        return typeof data["url"] === "string" && data["url"] !== "" ? `found published at ${data["url"]}` : "found published";
      case "key.quota_exceeded":
        return typeof data["requestsPerDay"] === "number" ? `${data["requestsPerDay"].toLocaleString("en")} requests a day` : "";
      case "trust_policy.created": {
        const subject = typeof data["subject"] === "string" ? `, for ${data["subject"]}` : "";
        return `${policy()}${subject}`;
      }
      case "trust_policy.deleted":
        return policy();
      case "workload.exchanged":
        return typeof data["sub"] === "string" ? `${data["sub"]} with ${policy()}` : policy();
      case "grant.created":
      case "grant.revoked":
        return typeof data["clientName"] === "string" ? `“${data["clientName"]}”` : typeof data["clientId"] === "string" ? data["clientId"] : "";
      default:
        return "";
    }
  }

  async function loadKeys(): Promise<void> {
    try {
      const page = await app.call(() => app.client.auth.listApiKeys(null, { limit: 100 }));
      labels = new Map(page.keys.map((k) => [k.id, k]));
      for (const key of page.keys) keyFilter.append(h("option", { value: key.id }, `${key.label} (${key.hint ?? "…"})`));
    } catch {
      // Without labels the events still show; their keys read "a key no longer listed".
    }
  }

  let loads = 0;
  async function load(reset: boolean): Promise<void> {
    const current = ++loads;
    errors.clear();
    list.setAttribute("aria-busy", "true");
    try {
      const options: { limit: number; cursor?: string; type?: string; keyId?: string; workspaceId?: string } = { limit: PAGE_SIZE };
      if (!reset && cursor !== null) options.cursor = cursor;
      if (typeFilter.value !== "") options.type = typeFilter.value;
      if (keyFilter.value !== "") options.keyId = keyFilter.value;
      if (app.current !== null) options.workspaceId = app.current;
      const page = await app.call(() => app.client.auth.listEvents(options));
      if (current !== loads) return;
      events = reset ? page.events : [...events, ...page.events];
      cursor = page.nextCursor;
      draw();
    } catch (error) {
      if (current !== loads) return;
      if (error instanceof NotFoundError) {
        replace(
          list,
          h("div", { class: "empty" }, h("p", {}, "This service does not record activity yet: its audit events arrive with a newer version.")),
        );
      } else {
        errors.show(problemText(error), () => void load(reset));
      }
    } finally {
      if (current === loads) list.setAttribute("aria-busy", "false");
    }
  }

  function draw(): void {
    more.hidden = cursor === null;
    if (events.length === 0) {
      const filtered = typeFilter.value !== "" || keyFilter.value !== "";
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("p", {}, filtered ? "No event matches these filters." : "Nothing has happened yet. Create a workspace or a key and it shows here."),
        ),
      );
      return;
    }
    replace(
      list,
      h(
        "table",
        { class: "events" },
        h("caption", { class: "visually-hidden" }, "Activity, newest first"),
        h("thead", {}, h("tr", {}, ...["When", "Event", "Key", "Workspace", "By", "From"].map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          ...events.map((event) => {
            const said = what(event);
            return h(
              "tr",
              { "data-event-type": event.type },
              h("td", { "data-label": "When" }, h("time", { datetime: event.occurredAt }, dateTime(event.occurredAt))),
              h("th", { scope: "row", "data-label": "Event", class: "label" }, words(eventName(event.type)), said === "" ? null : h("span", { class: "detail block" }, words(said))),
              h("td", { "data-label": "Key", class: "label" }, keyName(event.keyId)),
              h("td", { "data-label": "Workspace", class: "label" }, app.workspaceName(event.workspaceId)),
              h("td", { "data-label": "By", class: "label" }, actor(event)),
              h("td", { "data-label": "From" }, event.sourceIp ?? "—"),
            );
          }),
        ),
      ),
    );
  }

  // Side by side: the events do not wait for the labels (each call has the answer budget,
  // so the screen gives up after one budget, not two).
  void Promise.all([loadKeys(), load(true)]).then(() => {
    if (events.length > 0) draw();
  });
}
