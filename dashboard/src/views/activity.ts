// Activity: the audit events of the user's keys and of the workspaces they own, newest
// first, for services that record them.

import type { AuditEvent } from "memory-sdk";
import { NotFoundError } from "memory-sdk";

import type { App } from "../app.js";
import { append, errorArea, h, replace } from "../dom.js";
import { dateTime, eventName, problemText } from "../format.js";

const PAGE_SIZE = 25;

function actor(event: AuditEvent): string {
  if ("system" in event.actor) return `the service (${event.actor.system})`;
  const via = event.actor.credential === "api_key" ? ` with ${event.actor.keyId ?? "a key"}` : "";
  return `${event.actor.userId}${via}`;
}

export function renderActivity(app: App, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list", "aria-busy": "true" });
  const more = h("button", { type: "button", class: "secondary" }, "Load more events");
  more.hidden = true;
  let events: AuditEvent[] = [];
  let cursor: string | null = null;
  more.addEventListener("click", () => void load());

  append(
    main,
    h("h1", {}, "Activity"),
    h("p", { class: "intro" }, "Every change to your keys and to the workspaces you own: who did it, when, and from where."),
    errors.element,
    list,
    more,
  );

  async function load(): Promise<void> {
    errors.clear();
    try {
      const options: { limit: number; cursor?: string } = { limit: PAGE_SIZE };
      if (cursor !== null) options.cursor = cursor;
      const page = await app.call(() => app.client.auth.listEvents(options));
      events = [...events, ...page.events];
      cursor = page.nextCursor;
      draw();
    } catch (error) {
      if (error instanceof NotFoundError) {
        replace(
          list,
          h("div", { class: "empty" }, h("p", {}, "This service does not record activity yet: its audit events arrive with a newer version.")),
        );
      } else {
        errors.show(problemText(error));
      }
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  }

  function draw(): void {
    more.hidden = cursor === null;
    if (events.length === 0) {
      replace(
        list,
        h("div", { class: "empty" }, h("p", {}, "Nothing has happened yet. Create a workspace or a key and it shows here.")),
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
          ...events.map((event) =>
            h(
              "tr",
              { "data-event-type": event.type },
              h("td", { "data-label": "When" }, h("time", { datetime: event.occurredAt }, dateTime(event.occurredAt))),
              h("th", { scope: "row", "data-label": "Event" }, eventName(event.type)),
              h("td", { "data-label": "Key" }, event.keyId === null ? "—" : h("code", {}, event.keyId)),
              h("td", { "data-label": "Workspace" }, app.workspaceName(event.workspaceId)),
              h("td", { "data-label": "By" }, actor(event)),
              h("td", { "data-label": "From" }, event.sourceIp ?? "—"),
            ),
          ),
        ),
      ),
    );
  }

  void load();
}
