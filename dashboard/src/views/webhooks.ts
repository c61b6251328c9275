// Webhooks: URLs that the chosen workspace's audit events are sent to as they happen, each
// delivery signed with the webhook's secret (shown once, when it is added or rotated). Per
// workspace, and only its owner manages them; anyone else is told why. Each webhook's recent
// deliveries are listed with their attempts and the receiver's last answer; a failed one can
// be tried again.

import type { Delivery, Webhook } from "../api.js";
import type { Context } from "../context.js";
import { confirmAction, formAnswer, infoDialog, showSecret } from "../dialogs.js";
import { announce, append, errorArea, field, h, replace, token, uid } from "../dom.js";
import { dateTime, eventName, eventsText, EVENT_TYPES, lastResponse, problemText } from "../format.js";
import { EVERY_EVENT, newWebhookRequest, webhookChanges, type WebhookForm } from "../requests.js";
import { checkboxes, confirmThen, empty, listTable, loader, ownedSection, rowAction, toolbar } from "./owned.js";

/** While a delivery is due within this, its list follows it (every FOLLOW_MS). */
const FOLLOW_WITHIN_MS = 60_000;
const FOLLOW_MS = 2_000;

const STATES: Readonly<Record<Delivery["state"], { text: string; badge: string }>> = {
  pending: { text: "Pending", badge: "soon" },
  delivered: { text: "Delivered", badge: "active" },
  failed: { text: "Failed", badge: "revoked" },
};

const SECRET = { noun: "signing secret", label: "Signing secret", once: true } as const;

export function renderWebhooks(app: Context, main: HTMLElement): void {
  const section = ownedSection(app, main, {
    title: "Webhooks",
    intro:
      "A webhook sends the workspace's events (keys created or revoked, members added, …) to a URL of yours as " +
      "they happen. Each delivery is signed with the webhook's secret, so that your receiver can check it came from here.",
    things: "webhooks",
    forMembers:
      "You are a member of this workspace, not its owner. Webhooks send the workspace's events to other services, " +
      "so only the owner can see or change them: ask them to add the one you need.",
    noWorkspace: "Webhooks belong to a workspace, and only its owner manages them. Create a workspace under Workspaces first.",
  });
  if (section === undefined) return;
  const { workspace: current, body, errors } = section;
  const load = loader(section, main, () => app.call(() => app.api.listWebhooks(current.id)), draw, true);

  function draw(webhooks: Webhook[]): void {
    const create = h("button", { type: "button", class: "primary" }, "Add webhook");
    create.addEventListener("click", () => void add());
    const tools = toolbar(`Webhooks of ${current.name}`, create);
    if (webhooks.length === 0) {
      replace(
        body,
        tools,
        empty(
          "No webhooks yet",
          "Add one to have this workspace's events sent to your URL as they happen, signed so that your receiver can verify them.",
        ),
      );
      return;
    }
    const headings = ["URL", "Description", "Events", "Status", "Created", "Actions"];
    replace(body, tools, listTable("webhooks", `Webhooks of ${current.name}`, headings, webhooks.map(row)));
  }

  function row(webhook: Webhook): HTMLTableRowElement {
    const action = (text: string, label: string, work: () => Promise<void>, className = "secondary small"): HTMLButtonElement =>
      rowAction(text, `${label} ${webhook.url}`, errors, work, className);
    const status = h("td", { "data-label": "Status" }, h("span", { class: `badge ${webhook.enabled ? "active" : "expired"}` }, webhook.enabled ? "Enabled" : "Disabled"));
    if (webhook.failingSince !== null) {
      append(status, h("span", { class: "detail" }, "Failing since ", h("time", { datetime: webhook.failingSince }, dateTime(webhook.failingSince))));
    }
    if (webhook.previousSecretExpiresAt !== null) {
      const until = webhook.previousSecretExpiresAt;
      append(status, h("span", { class: "detail" }, "The old secret signs too until ", h("time", { datetime: until }, dateTime(until))));
    }
    return h(
      "tr",
      { "data-webhook-id": webhook.id, "data-enabled": String(webhook.enabled) },
      h("th", { scope: "row", "data-label": "URL", class: "label" }, token(webhook.url)),
      h("td", { "data-label": "Description", class: "wrap" }, webhook.description ?? "—"),
      h("td", { "data-label": "Events", class: "wrap" }, eventsText(webhook.events)),
      status,
      h("td", { "data-label": "Created" }, h("time", { datetime: webhook.createdAt }, dateTime(webhook.createdAt))),
      h(
        "td",
        { "data-label": "Actions", class: "row-actions" },
        action("Deliveries", "Deliveries to", () => showDeliveries(app, current.id, webhook)),
        action("Edit", "Edit webhook", () => edit(webhook)),
        webhook.enabled
          ? action("Disable", "Disable webhook", () => setEnabled(webhook, false))
          : action("Enable", "Enable webhook", () => setEnabled(webhook, true)),
        action("Rotate secret", "Rotate secret of", () => rotate(webhook)),
        action("Delete", "Delete webhook", () => remove(webhook), "danger small"),
      ),
    );
  }

  /** Draws the list again with the focus on the webhook's button `action`, else the table. */
  async function reloadAt(webhookId: string, action: string): Promise<void> {
    await load();
    const button = body.querySelector<HTMLElement>(`tr[data-webhook-id="${CSS.escape(webhookId)}"] button[data-action="${action}"]`);
    (button ?? body.querySelector<HTMLElement>("table") ?? main).focus();
  }

  async function add(): Promise<void> {
    const form = webhookFields();
    const created = await formAnswer({
      title: `Add a webhook to ${current.name}`,
      fields: form.fields,
      submit: "Add webhook",
      onSubmit: async () => {
        const checked = newWebhookRequest(form.values());
        if (!checked.ok) throw new Error(checked.problem);
        return app.call(() => app.api.createWebhook(current.id, checked.value));
      },
    });
    if (created === undefined) return;
    announce(`Webhook ${created.url} added.`);
    await showSecret({
      ...SECRET,
      title: "The webhook's signing secret",
      key: created.secret,
      summary: `Deliveries to ${created.url} are signed with this secret (Standard Webhooks). Give it to your receiver so that it can verify them.`,
    });
    await load(true);
  }

  async function edit(webhook: Webhook): Promise<void> {
    const form = webhookFields(webhook);
    const changed = await formAnswer({
      title: `Edit webhook ${webhook.url}`,
      fields: form.fields,
      submit: "Save changes",
      onSubmit: async () => {
        const checked = webhookChanges(webhook, form.values());
        if (!checked.ok) throw new Error(checked.problem);
        return app.call(() => app.api.updateWebhook(current.id, webhook.id, checked.value));
      },
    });
    if (changed === undefined) return;
    announce(`Webhook ${changed.url} changed.`);
    await reloadAt(webhook.id, "Edit");
  }

  async function setEnabled(webhook: Webhook, enabled: boolean): Promise<void> {
    if (!enabled) {
      const sure = await confirmAction({
        title: `Disable webhook ${webhook.url}?`,
        message:
          "Nothing more is delivered to it until you enable it again: new events are not sent, and deliveries " +
          "still waiting for a retry fail. You can retry them once it is enabled.",
        confirm: "Disable webhook",
        danger: true,
      });
      if (!sure) return;
    }
    await app.call(() => app.api.updateWebhook(current.id, webhook.id, { enabled }));
    announce(enabled ? `Webhook ${webhook.url} enabled: new events are delivered to it again.` : `Webhook ${webhook.url} disabled.`);
    await reloadAt(webhook.id, enabled ? "Disable" : "Enable");
  }

  async function rotate(webhook: Webhook): Promise<void> {
    const sure = await confirmAction({
      title: `Rotate the signing secret of ${webhook.url}?`,
      message:
        "A new secret signs every delivery from now on. The current one keeps working beside it for 24 hours: " +
        "give your receiver the new secret within that time.",
      confirm: "Rotate secret",
    });
    if (!sure) return;
    const rotated = await app.call(() => app.api.rotateWebhookSecret(current.id, webhook.id));
    const until = rotated.previousSecretExpiresAt === null ? "" : ` (until ${dateTime(rotated.previousSecretExpiresAt)})`;
    await showSecret({
      ...SECRET,
      title: "The webhook's new signing secret",
      key: rotated.secret,
      summary: `Deliveries to ${rotated.url} are signed with this secret from now on. The old secret keeps working for 24 hours${until}: give your receiver the new one before then.`,
    });
    await reloadAt(webhook.id, "Rotate secret");
  }

  async function remove(webhook: Webhook): Promise<void> {
    const question = {
      title: `Delete webhook ${webhook.url}?`,
      message: "Nothing more is delivered to it, and its deliveries are no longer listed. This cannot be undone.",
      confirm: "Delete webhook",
      danger: true,
    };
    const work = (): Promise<void> => app.call(() => app.api.deleteWebhook(current.id, webhook.id));
    await confirmThen(question, work, `Webhook ${webhook.url} deleted.`, load);
  }

  void load();
}

/** A webhook's recent deliveries in a dialog, followed while one is due within a minute. */
async function showDeliveries(app: Context, workspaceId: string, webhook: Webhook): Promise<void> {
  const errors = errorArea();
  const list = h("div", { class: "deliveries", "aria-busy": "true" }, h("p", {}, "Loading the deliveries…"));
  const refresh = h("button", { type: "button", class: "secondary small" }, "Refresh");
  let open = true;
  let timer: number | undefined;
  let states = new Map<string, Delivery["state"]>();

  const load = async (): Promise<void> => {
    window.clearTimeout(timer);
    errors.clear();
    list.setAttribute("aria-busy", "true");
    try {
      const deliveries = await app.call(() => app.api.listDeliveries(workspaceId, webhook.id));
      if (!open) return;
      sayChanges(deliveries);
      draw(deliveries);
      if (deliveries.some(dueSoon)) timer = window.setTimeout(() => void load(), FOLLOW_MS);
    } catch (error) {
      if (!open) return;
      replace(list);
      errors.show(problemText(error), () => void load());
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  };

  /** A delivery that changed state since the last draw is announced (the list is not live). */
  function sayChanges(deliveries: Delivery[]): void {
    const changed = deliveries.filter((d) => states.has(d.id) && states.get(d.id) !== d.state);
    states = new Map(deliveries.map((d) => [d.id, d.state]));
    if (changed.length > 0) announce(changed.map((d) => `${eventName(d.eventType)}: ${STATES[d.state].text.toLowerCase()}.`).join(" "));
  }

  function draw(deliveries: Delivery[]): void {
    // A redraw keeps the focus on the same delivery's button (the list follows itself).
    const focused = document.activeElement;
    const focusedId = focused instanceof HTMLElement && list.contains(focused) ? focused.closest("tr")?.dataset["deliveryId"] : undefined;
    if (deliveries.length === 0) {
      replace(
        list,
        h(
          "p",
          { class: "empty" },
          "No deliveries yet. Each event of the types this webhook wants is delivered within seconds, and listed here for 30 days.",
        ),
      );
      return;
    }
    const headings = ["Event", "Status", "Attempts", "Last response", "Time", "Actions"];
    replace(list, listTable("deliveries", `Deliveries to ${webhook.url}, newest first`, headings, deliveries.map((d) => deliveryRow(d))));
    if (focusedId !== undefined) {
      const again = list.querySelector<HTMLElement>(`tr[data-delivery-id="${CSS.escape(focusedId)}"] button`);
      (again ?? list.querySelector<HTMLElement>("table"))?.focus();
    }
  }

  function deliveryRow(delivery: Delivery): HTMLTableRowElement {
    const state = STATES[delivery.state];
    const when = delivery.lastAttemptAt ?? delivery.createdAt;
    const status = h("td", { "data-label": "Status" }, h("span", { class: `badge ${state.badge}` }, state.text));
    if (delivery.state === "pending" && delivery.nextAttemptAt !== null) {
      append(status, h("span", { class: "detail" }, "Next try ", h("time", { datetime: delivery.nextAttemptAt }, dateTime(delivery.nextAttemptAt))));
    }
    const name = eventName(delivery.eventType);
    return h(
      "tr",
      { "data-delivery-id": delivery.id, "data-state": delivery.state },
      h("th", { scope: "row", "data-label": "Event", class: "label" }, name),
      status,
      h("td", { "data-label": "Attempts" }, String(delivery.attempts)),
      h("td", { "data-label": "Last response" }, lastResponse(delivery)),
      h("td", { "data-label": "Time" }, h("time", { datetime: when }, dateTime(when))),
      h(
        "td",
        { "data-label": "Actions", class: "row-actions" },
        delivery.state === "failed" ? retryButton(delivery, `${name}, ${dateTime(when)}`) : null,
      ),
    );
  }

  function retryButton(delivery: Delivery, what: string): HTMLButtonElement {
    return rowAction(
      "Retry",
      `Retry the delivery of ${what}`,
      errors,
      async () => {
        await app.call(() => app.api.retryDelivery(workspaceId, webhook.id, delivery.id));
        announce(`The delivery of ${eventName(delivery.eventType)} is tried again now.`);
        await load();
        (list.querySelector<HTMLElement>(`tr[data-delivery-id="${CSS.escape(delivery.id)}"] button`) ?? list.querySelector<HTMLElement>("table"))?.focus();
      },
      "secondary small",
    );
  }

  refresh.addEventListener("click", () => void load());
  const shown = infoDialog(`Deliveries to ${webhook.url}`, [
    h("p", { class: "hint" }, "The newest first, kept 30 days. A failed delivery can be tried again once the receiver is fixed."),
    h("p", {}, refresh),
    errors.element,
    list,
  ]);
  void load();
  await shown;
  open = false;
  window.clearTimeout(timer);
}

function dueSoon(delivery: Delivery): boolean {
  if (delivery.state !== "pending") return false;
  return delivery.nextAttemptAt === null || Date.parse(delivery.nextAttemptAt) - Date.now() < FOLLOW_WITHIN_MS;
}

/** The add and edit form: URL, description (on add: the service keeps it as it was), and
 * the event types from the one list the dashboard knows (format.ts). */
function webhookFields(current?: Webhook): { fields: Node[]; values(): WebhookForm } {
  const url = h("input", { type: "url", autocomplete: "off", spellcheck: "false", maxlength: 2048, placeholder: "https://hooks.example.com/memory" });
  url.value = current?.url ?? "";
  const description = h("input", { type: "text", autocomplete: "off", maxlength: 100, placeholder: "e.g. alerts to the team channel" });
  const everyId = uid("webhook-events");
  const chosenId = uid("webhook-events");
  const everyOne = current === undefined || current.events.includes(EVERY_EVENT);
  const every = h("input", { type: "radio", name: everyId, id: everyId, value: "every", checked: everyOne });
  const some = h("input", { type: "radio", name: everyId, id: chosenId, value: "some", checked: !everyOne });
  const which = h(
    "fieldset",
    {},
    h("legend", {}, "Events to send"),
    h(
      "div",
      { class: "choices" },
      h("div", { class: "choice" }, every, h("label", { for: everyId }, "Every event, also types added later")),
      h("div", { class: "choice" }, some, h("label", { for: chosenId }, "Only the types chosen below")),
    ),
  );
  const types = checkboxes("Event types", EVENT_TYPES, (type) => current?.events.includes(type) ?? false, eventName);
  const toggle = (): void => {
    types.element.disabled = every.checked;
  };
  every.addEventListener("change", toggle);
  some.addEventListener("change", toggle);
  toggle();
  const fields: Node[] = [field("URL", url, "https and a public host name; each delivery is a signed POST to it.")];
  if (current === undefined) fields.push(field("Description (optional)", description, "What receives the events, in words."));
  fields.push(which, types.element);
  return {
    fields,
    values: () => ({ url: url.value, description: description.value, every: every.checked, events: types.chosen() }),
  };
}
