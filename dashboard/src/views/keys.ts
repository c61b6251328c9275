// API keys: the table (with search, status filter and paging), and create, reveal, rotate,
// rename and revoke. Plaintext keys live only inside the dialog that shows them. The search
// is the service's (`q`): it finds a key on any page, not only among the keys loaded.

import { newIdempotencyKey, type ApiKey, type ApiKeyWithSecret, type KeyStatus } from "memory-sdk";

import type { Context } from "../context.js";
import { confirmAction, formDialog, showSecret } from "../dialogs.js";
import { quotaInput, quotaText, QUOTA_HINT, showUsage } from "./usage.js";
import { announce, append, errorArea, field, h, replace, uid, words } from "../dom.js";
import { dateTime, expiresSoon, GRACE_CHOICES, lastUsedShown, problemText } from "../format.js";
import {
  ADMIN_SCOPE,
  DATA_PLANE_SCOPES,
  MAX_LIFETIME_DAYS,
  canonicalJwk,
  jwkThumbprint,
  newKeyRequest,
  rotateRequest,
  updateRequest,
} from "../requests.js";

const PAGE_SIZE = 25;
const MAX_PAGE = 100; // the service's largest page
const STATUSES: ReadonlyArray<{ value: "" | KeyStatus; label: string }> = [
  { value: "", label: "All" },
  { value: "active", label: "Active" },
  { value: "revoked", label: "Revoked" },
  { value: "expired", label: "Expired" },
];

/** The service records last use and takes grace periods and allow-lists (newer versions). */
function hasLifecycleFields(key: ApiKey): boolean {
  return "lastUsedAt" in key;
}

const SEARCH_DELAY_MS = 300; // typing pauses this long before the service is asked
const MAX_SEARCH = 100; // the service's longest search
// A search page may come back empty while the service has more keys to search (it reads a
// bounded number per request): so many pages are asked for at once before the person is.
const SEARCH_PAGES = 5;

type ListOptions = { limit: number; status?: KeyStatus; cursor?: string; query?: string };

export function renderKeys(app: Context, main: HTMLElement): void {
  let status: "" | KeyStatus = "";
  let search = "";
  let keys: ApiKey[] = [];
  let cursor: string | null = null;
  const errors = errorArea();
  const list = h("div", { class: "list", "aria-live": "polite", "aria-busy": "true" });
  const more = h("button", { type: "button", class: "secondary" }, "Load more keys");
  more.hidden = true;

  const filter = h("select", { id: "status-filter" }, ...STATUSES.map((s) => h("option", { value: s.value }, s.label)));
  filter.addEventListener("change", () => {
    status = filter.value as "" | KeyStatus;
    void load(true);
  });
  const searchBox = h("input", {
    type: "search",
    id: "key-search",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "Label",
    maxlength: String(MAX_SEARCH),
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  function searchNow(): void {
    clearTimeout(typing);
    const wanted = searchBox.value.trim();
    if (wanted === search) return;
    search = wanted;
    void load(true);
  }
  searchBox.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(searchNow, SEARCH_DELAY_MS);
  });
  searchBox.addEventListener("keydown", (event) => {
    if (event.key === "Enter") searchNow();
  });
  const create = h("button", { type: "button", class: "primary" }, "Create key");
  create.addEventListener("click", () => void createKey());
  more.addEventListener("click", () => void load(false));

  const where = app.current === null ? "every workspace" : app.workspaceName(app.current);
  append(
    main,
    h("h1", {}, "API keys"),
    h(
      "p",
      { class: "intro" },
      "Keys let your apps and scripts call the memory service. A workspace key works in one workspace; " +
        "an admin key manages keys and workspaces. ",
      h("span", {}, `Showing keys for ${where}.`),
    ),
    h(
      "div",
      { class: "toolbar" },
      h(
        "div",
        { class: "filters" },
        h("div", { class: "field inline" }, h("label", { for: "key-search" }, "Search"), searchBox),
        h("div", { class: "field inline" }, h("label", { for: "status-filter" }, "Status"), filter),
      ),
      create,
    ),
    errors.element,
    list,
    more,
  );

  // Each load is numbered: an answer to a load that a later one superseded (the filter changed
  // while it was on its way) is dropped, so a slow earlier answer never overwrites a newer one.
  let loads = 0;

  async function load(reset: boolean): Promise<void> {
    const current = ++loads;
    errors.clear();
    list.setAttribute("aria-busy", "true");
    try {
      let found: ApiKey[] = [];
      let next = reset ? null : cursor;
      let asked = 0;
      do {
        const options = listOptions(PAGE_SIZE, next);
        const page = await app.call(() => app.client.auth.listApiKeys(app.current, options));
        if (current !== loads) return;
        found = [...found, ...page.keys];
        next = page.nextCursor;
        asked += 1;
        // An empty page of a search with more to search: ask on, a few pages at a time.
      } while (search !== "" && found.length === 0 && next !== null && asked < SEARCH_PAGES);
      keys = reset ? found : [...keys, ...found];
      cursor = next;
      draw();
    } catch (error) {
      if (current === loads) errors.show(problemText(error), () => void load(reset));
    } finally {
      if (current === loads) list.setAttribute("aria-busy", "false");
    }
  }

  /**
   * After an action: the same keys again (as many as were on show, every page loaded so
   * far), and the focus back where it was, on the same key's button or row.
   */
  async function reloadInPlace(focus: { keyId: string; button?: string }): Promise<void> {
    const current = ++loads;
    const wanted = Math.max(PAGE_SIZE, keys.length);
    list.setAttribute("aria-busy", "true");
    try {
      let found: ApiKey[] = [];
      let next: string | null = null;
      do {
        const options = listOptions(Math.min(MAX_PAGE, Math.max(PAGE_SIZE, wanted - found.length)), next);
        const page = await app.call(() => app.client.auth.listApiKeys(app.current, options));
        found = [...found, ...page.keys];
        next = page.nextCursor;
      } while (next !== null && found.length < wanted);
      if (current !== loads) return;
      keys = found;
      cursor = next;
      draw();
      restoreFocus(focus);
    } catch (error) {
      if (current === loads) errors.show(problemText(error), () => void reloadInPlace(focus));
    } finally {
      if (current === loads) list.setAttribute("aria-busy", "false");
    }
  }

  function restoreFocus(focus: { keyId: string; button?: string }): void {
    const row = list.querySelector<HTMLTableRowElement>(`tr[data-key-id="${CSS.escape(focus.keyId)}"]`);
    if (row === null) {
      list.querySelector<HTMLElement>("table")?.focus();
      return;
    }
    const button = [...row.querySelectorAll<HTMLButtonElement>("button")].find((b) => b.textContent === focus.button);
    (button ?? row.querySelector<HTMLElement>("th"))?.focus();
  }

  /** The list's request: the page size, the status filter, the search and where to go on. */
  function listOptions(limit: number, after: string | null): ListOptions {
    const options: ListOptions = { limit };
    if (status !== "") options.status = status;
    if (search !== "") options.query = search;
    if (after !== null) options.cursor = after;
    return options;
  }

  function draw(): void {
    more.hidden = cursor === null;
    more.textContent = search !== "" && keys.length === 0 ? "Search further" : "Load more keys";
    if (keys.length === 0) {
      replace(list, search === "" ? emptyState() : noMatch());
      return;
    }
    const lastUsed = keys.some(hasLifecycleFields);
    const headings = ["Label", "Key", "Kind", "Workspace", "Scopes", "Status", "Created", "Expires"];
    if (lastUsed) headings.push("Last used");
    headings.push("Actions");
    replace(
      list,
      h(
        "table",
        { class: "keys", tabindex: "-1" },
        h("caption", { class: "visually-hidden" }, `API keys in ${where}`),
        h("thead", {}, h("tr", {}, ...headings.map((text) => h("th", { scope: "col" }, text)))),
        h("tbody", {}, ...keys.map((key) => row(key, lastUsed))),
      ),
    );
  }

  /** A workspace key whose owner has left its workspace: every request with it is refused. */
  function orphaned(key: ApiKey): boolean {
    return key.category === "workspace" && key.workspaceId !== null && !app.workspaces.some((w) => w.id === key.workspaceId);
  }

  function keyName(id: string): string {
    const other = keys.find((k) => k.id === id);
    return other === undefined ? "a newer key" : `“${other.label}” (${other.hint ?? "…"})`;
  }

  function jumpTo(id: string, text: string): HTMLElement {
    if (!keys.some((k) => k.id === id)) return h("span", {}, text);
    const link = h("button", { type: "button", class: "link" }, text);
    link.addEventListener("click", () => {
      const target = list.querySelector<HTMLElement>(`tr[data-key-id="${CSS.escape(id)}"] th`);
      target?.scrollIntoView({ block: "center" });
      target?.focus();
    });
    return link;
  }

  /** A search without a key to show: "no match" only once the service has searched them all. */
  function noMatch(): HTMLElement {
    const text =
      cursor === null
        ? `No keys match “${search}”${status === "" ? "" : ` among the ${status} keys`}.`
        : `No match for “${search}” among the keys searched so far: search further for older keys.`;
    return h("div", { class: "empty" }, h("p", {}, text));
  }

  function emptyState(): HTMLElement {
    if (status !== "") {
      const scope = app.current === null ? "in any workspace" : `in ${where}`;
      return h("div", { class: "empty" }, h("p", {}, `No ${status} keys ${scope}.`));
    }
    if (app.workspaces.length === 0) {
      const admin = h("button", { type: "button", class: "secondary" }, "Create an admin key");
      admin.addEventListener("click", () => void createKey("admin"));
      return h(
        "div",
        { class: "empty" },
        h("h2", {}, "No API keys yet"),
        h(
          "p",
          {},
          "Start with a workspace: it holds the memory your apps share. Then create a workspace key " +
            "for each app that uses it.",
        ),
        h("p", { class: "actions-start" }, h("a", { class: "button primary", href: "#workspaces" }, "Create a workspace"), admin),
      );
    }
    const first = h("button", { type: "button", class: "primary" }, "Create your first key");
    first.addEventListener("click", () => void createKey());
    return h(
      "div",
      { class: "empty" },
      h("h2", {}, "No API keys yet"),
      h(
        "p",
        {},
        "Create one key for each app or script that calls the memory service, so that you can " +
          "rotate or revoke it alone. You see a new key once: have your secret manager ready.",
      ),
      h("p", {}, first),
    );
  }

  function row(key: ApiKey, lastUsed: boolean): HTMLTableRowElement {
    const statusCell = h("td", { "data-label": "Status" }, h("span", { class: `badge ${key.status}` }, key.status));
    if (expiresSoon(key)) append(statusCell, " ", h("span", { class: "badge soon" }, "expires soon"));
    if (key.replacedBy !== null && key.status === "active") {
      append(statusCell, " ", h("span", { class: "badge grace" }, "replaced"));
    }
    if (key.status !== "revoked" && orphaned(key)) {
      append(
        statusCell,
        " ",
        h("span", { class: "badge left" }, "you left its workspace"),
        h("span", { class: "hint block" }, "Every request with it is refused."),
      );
    }
    if (key.dpopJkt !== null && key.dpopJkt !== undefined) {
      append(statusCell, h("span", { class: "hint block", title: `Thumbprint (dpopJkt): ${key.dpopJkt}` }, "bound to a key pair"));
    }
    if (key.requestsPerDay !== null && key.requestsPerDay !== undefined) {
      append(statusCell, h("span", { class: "hint block" }, `quota ${quotaText(key.requestsPerDay).replace(/^(\S+) requests a day$/, "$1 a day")}`));
    }
    const label = h("th", { scope: "row", "data-label": "Label", tabindex: "-1", class: "label" }, words(key.label));
    if (key.replacedBy !== null) {
      append(label, h("span", { class: "pair" }, "replaced by ", jumpTo(key.replacedBy, keyName(key.replacedBy))));
    }
    const predecessor = keys.find((k) => k.replacedBy === key.id);
    if (predecessor !== undefined) {
      append(label, h("span", { class: "pair" }, "replaces ", jumpTo(predecessor.id, `“${predecessor.label}” (${predecessor.hint ?? "…"})`)));
    }
    const cells = [
      label,
      h("td", { "data-label": "Key" }, h("code", {}, key.hint ?? "—")),
      h("td", { "data-label": "Kind" }, key.category === "workspace" ? "workspace" : "admin"),
      h("td", { "data-label": "Workspace", class: "wrap" }, orphaned(key) ? "a workspace you left" : app.workspaceName(key.workspaceId)),
      h("td", { "data-label": "Scopes" }, key.scopes.join(", ")),
      statusCell,
      h("td", { "data-label": "Created" }, h("time", { datetime: key.createdAt }, dateTime(key.createdAt))),
      h("td", { "data-label": "Expires" }, h("time", { datetime: key.expiresAt }, dateTime(key.expiresAt))),
    ];
    if (lastUsed) {
      const used = lastUsedShown(key);
      cells.push(h("td", { "data-label": "Last used" }, used === null ? "never" : h("time", { datetime: used }, dateTime(used))));
    }
    cells.push(h("td", { "data-label": "Actions", class: "row-actions" }, ...actions(key)));
    return h("tr", { "data-key-id": key.id, class: orphaned(key) ? "orphaned" : null }, ...cells);
  }

  function action(text: string, label: string, work: () => Promise<void>, danger = false): HTMLButtonElement {
    const button = h("button", { type: "button", class: danger ? "danger small" : "secondary small", "aria-label": `${text} ${label}` }, text);
    button.addEventListener("click", () => {
      errors.clear();
      work().catch((error: unknown) => errors.show(problemText(error)));
    });
    button.dataset["action"] = text;
    return button;
  }

  function actions(key: ApiKey): HTMLButtonElement[] {
    const buttons: HTMLButtonElement[] = [];
    const name = `key “${key.label}”`;
    if (key.status !== "revoked" && orphaned(key)) {
      // Reveal, rotate and rename need the workspace; revoking it is all that is left.
      buttons.push(action("Revoke", name, () => revoke(key), true));
      return buttons;
    }
    if (key.status !== "revoked" && key.revealable) buttons.push(action("Reveal", name, () => reveal(key)));
    if (key.status === "active" && key.replacedBy === null) buttons.push(action("Rotate", name, () => rotate(key)));
    if (key.status !== "revoked") buttons.push(action("Usage", name, () => usage(key)));
    if (key.status !== "revoked") buttons.push(action("Edit", name, () => rename(key)));
    if (key.status !== "revoked") buttons.push(action("Revoke", name, () => revoke(key), true));
    return buttons;
  }

  async function present(key: ApiKeyWithSecret, title: string, once: boolean, summary: string): Promise<void> {
    // The plaintext goes to the dialog and nowhere else; this function holds the only other
    // reference, and returns as the dialog closes.
    await showSecret({ title, key: key.key, once, summary });
  }

  async function createKey(kind?: "workspace" | "admin"): Promise<void> {
    const form = newKeyFields(app, kind ?? (app.workspaces.length > 0 ? "workspace" : "admin"));
    let created: ApiKeyWithSecret | undefined;
    // One key however often the same form is sent: a send given up on (no answer within the
    // budget, or an outage) may still have made it, and "Try again" then gets that key.
    let sent: { body: string; idempotencyKey: string } | undefined;
    const ok = await formDialog({
      title: "Create an API key",
      fields: form.fields,
      submit: "Create key",
      onSubmit: async () => {
        const checked = newKeyRequest(form.values());
        if (!checked.ok) throw new Error(checked.problem);
        const body = JSON.stringify(checked.value);
        if (sent?.body !== body) sent = { body, idempotencyKey: newIdempotencyKey() };
        const request = { ...checked.value, idempotencyKey: sent.idempotencyKey };
        created = await app.call(() => app.client.auth.createApiKey(request));
      },
    });
    if (!ok || created === undefined) return;
    const key = created;
    created = undefined;
    await present(key, "Your new API key", true, `“${key.label}” (${key.hint ?? key.id}) is ready.`);
    await reloadInPlace({ keyId: key.id });
    announce(`Key ${key.label} created.`);
  }

  async function reveal(key: ApiKey): Promise<void> {
    const revealed = await app.call(() => app.client.auth.revealApiKey(key.id, null));
    await present(revealed, "Reveal API key", false, `“${key.label}” (${key.hint ?? key.id}).`);
  }

  async function rotate(key: ApiKey): Promise<void> {
    const graceName = uid("grace");
    const withGrace = hasLifecycleFields(key);
    const choices = GRACE_CHOICES.map((choice, index) =>
      h(
        "div",
        { class: "choice" },
        h("input", { type: "radio", name: graceName, id: `${graceName}-${index}`, value: String(choice.seconds), checked: index === 0 }),
        h("label", { for: `${graceName}-${index}` }, choice.label),
      ),
    );
    const grace = withGrace
      ? h("fieldset", {}, h("legend", {}, "When does the old key stop working?"), ...choices)
      : h("p", {}, "The old key stops working at once: update your apps with the new key right away.");
    let rotated: ApiKeyWithSecret | undefined;
    // One Idempotency-Key per choice, as for a new key: "Try again" after the answer budget
    // must not rotate twice when the first send went through after the page gave up.
    let sent: { seconds: number; idempotencyKey: string } | undefined;
    const ok = await formDialog({
      title: `Rotate “${key.label}”`,
      intro: "A new key with the same label, workspace and scopes replaces this one.",
      fields: [grace],
      submit: "Rotate key",
      onSubmit: async () => {
        const chosen = grace.querySelector<HTMLInputElement>("input:checked");
        const seconds = chosen === null ? 0 : Number(chosen.value);
        if (sent?.seconds !== seconds) sent = { seconds, idempotencyKey: newIdempotencyKey() };
        const request = { ...rotateRequest(seconds), idempotencyKey: sent.idempotencyKey };
        rotated = await app.call(() => app.client.auth.rotateApiKey(key.id, request));
      },
    });
    if (!ok || rotated === undefined) return;
    const next = rotated;
    rotated = undefined;
    await present(next, "Your rotated API key", true, `The new key for “${next.label}” (${next.hint ?? next.id}).`);
    await reloadInPlace({ keyId: key.id });
    announce(`Key ${key.label} rotated.`);
  }

  async function rename(key: ApiKey): Promise<void> {
    const label = h("input", { type: "text", maxlength: 100, required: true, autocomplete: "off" });
    label.value = key.label;
    const fields = [field("Label", label)];
    let cidrs: HTMLTextAreaElement | undefined;
    if ("allowedCidrs" in key) {
      cidrs = h("textarea", { rows: 3, spellcheck: "false" });
      cidrs.value = (key.allowedCidrs ?? []).join("\n");
      fields.push(field("Allowed addresses", cidrs, "IPv4 or IPv6 CIDRs, one per line. Empty: any address."));
    }
    let quota: HTMLInputElement | undefined;
    if ("requestsPerDay" in key) {
      quota = quotaInput();
      quota.value = key.requestsPerDay === null || key.requestsPerDay === undefined ? "" : String(key.requestsPerDay);
      fields.push(field("Daily quota (optional)", quota, QUOTA_HINT));
    }
    const ok = await formDialog({
      title: `Edit “${key.label}”`,
      fields,
      submit: "Save",
      onSubmit: async () => {
        const form: { label: string; allowedCidrs?: string; requestsPerDay?: string } = { label: label.value };
        if (cidrs !== undefined) form.allowedCidrs = cidrs.value;
        if (quota !== undefined) form.requestsPerDay = quota.value;
        const checked = updateRequest(key, form);
        if (!checked.ok) throw new Error(checked.problem);
        await app.call(() => app.client.auth.updateApiKey(key.id, checked.value));
      },
    });
    if (ok) {
      announce("Key saved.");
      await reloadInPlace({ keyId: key.id, button: "Edit" });
    }
  }

  async function usage(key: ApiKey): Promise<void> {
    await showUsage(app, key);
  }

  async function revoke(key: ApiKey): Promise<void> {
    const sure = await confirmAction({
      title: `Revoke “${key.label}”?`,
      message: `Every request with ${key.hint ?? "this key"} is refused from now on. This cannot be undone.`,
      confirm: "Revoke key",
      danger: true,
    });
    if (!sure) return;
    await app.call(() => app.client.auth.revokeApiKey(key.id));
    announce(`Key ${key.label} revoked.`);
    await reloadInPlace({ keyId: key.id });
  }

  void load(true);
}

interface NewKeyFields {
  fields: Node[];
  values(): Parameters<typeof newKeyRequest>[0];
}

function newKeyFields(app: Context, kind: "workspace" | "admin"): NewKeyFields {
  const label = h("input", { type: "text", maxlength: 100, required: true, autocomplete: "off", placeholder: "e.g. ingest worker" });
  const kindName = uid("kind");
  const kinds = [
    { value: "workspace", label: "Workspace key", hint: "for an app that works in one workspace" },
    { value: "admin", label: "Admin key", hint: "manages keys and workspaces, for automation" },
  ].map((k) =>
    h(
      "div",
      { class: "choice" },
      h("input", { type: "radio", name: kindName, id: `${kindName}-${k.value}`, value: k.value, checked: k.value === kind }),
      h("label", { for: `${kindName}-${k.value}` }, h("strong", {}, k.label), ` — ${k.hint}`),
    ),
  );
  const kindSet = h("fieldset", {}, h("legend", {}, "Kind"), ...kinds);

  const workspace = h(
    "select",
    { required: true },
    ...app.workspaces.map((w) => h("option", { value: w.id }, w.name)),
  );
  if (app.current !== null) workspace.value = app.current;
  const workspaceField = field(
    "Workspace",
    workspace,
    app.workspaces.length === 0 ? "You have no workspace yet: create one under Workspaces first." : undefined,
  );

  const scopeBoxes = [...DATA_PLANE_SCOPES, ADMIN_SCOPE].map((scope) => {
    const id = uid("scope");
    const box = h("input", { type: "checkbox", id, value: scope, checked: true });
    return { scope, box, wrapper: h("div", { class: "choice" }, box, h("label", { for: id }, scope)) };
  });
  const scopes = h("fieldset", {}, h("legend", {}, "Scopes"), h("div", { class: "choices" }, ...scopeBoxes.map((s) => s.wrapper)));

  const lifetime = h("input", { type: "number", min: 1, max: MAX_LIFETIME_DAYS, step: 1, inputmode: "numeric", placeholder: String(MAX_LIFETIME_DAYS) });
  const cidrs = h("textarea", { rows: 2, spellcheck: "false", placeholder: "203.0.113.0/24" });
  const quota = quotaInput();
  // A key-bound key (DPoP): the public JWK pasted, its thumbprint shown as soon as it is known.
  const publicJwk = h("textarea", { rows: 3, spellcheck: "false", placeholder: '{"kty": "EC", "crv": "P-256", "x": "…", "y": "…"}' });
  const thumbprintOut = h("output", { class: "hint block", "aria-live": "polite" });
  let dpopJkt: string | undefined;
  let computing = 0;
  publicJwk.addEventListener("input", () => {
    const mine = ++computing;
    dpopJkt = undefined;
    const checked = canonicalJwk(publicJwk.value);
    if (!checked.ok || checked.value === null) {
      thumbprintOut.textContent = checked.ok ? "" : checked.problem;
      return;
    }
    void jwkThumbprint(checked.value).then((print) => {
      if (mine !== computing) return; // typed on since: a newer one is on its way
      dpopJkt = print;
      thumbprintOut.textContent = `Thumbprint (dpopJkt): ${print}`;
    });
  });
  const bindField = field(
    "Bind to a key pair (optional)",
    publicJwk,
    "Paste the public JWK of the pair the key will be used with: the key then works only with a DPoP proof signed by that pair, so a copy of it alone is useless.",
  );
  append(bindField, thumbprintOut);

  const chosenKind = (): "workspace" | "admin" =>
    kindSet.querySelector<HTMLInputElement>("input:checked")?.value === "admin" ? "admin" : "workspace";
  const sync = (): void => {
    const admin = chosenKind() === "admin";
    workspaceField.hidden = admin;
    const adminScope = scopeBoxes.find((s) => s.scope === ADMIN_SCOPE);
    if (adminScope !== undefined) adminScope.wrapper.hidden = !admin;
  };
  kindSet.addEventListener("change", sync);
  sync();

  return {
    fields: [
      field("Label", label, "Name it after the app or person that will use it."),
      kindSet,
      workspaceField,
      scopes,
      field("Lifetime in days (optional)", lifetime, `1 to ${MAX_LIFETIME_DAYS}. Empty: ${MAX_LIFETIME_DAYS} days.`),
      field("Allowed addresses (optional)", cidrs, "IPv4 or IPv6 CIDRs, one per line. Empty: any address."),
      field("Daily quota (optional)", quota, QUOTA_HINT),
      bindField,
    ],
    values: () => {
      const category = chosenKind();
      return {
        label: label.value,
        category,
        workspaceId: workspace.value,
        scopes: scopeBoxes.filter((s) => s.box.checked && !s.wrapper.hidden).map((s) => s.scope),
        lifetimeDays: lifetime.value,
        allowedCidrs: cidrs.value,
        requestsPerDay: quota.value,
        publicJwk: publicJwk.value,
        ...(dpopJkt === undefined ? {} : { dpopJkt }),
      };
    },
  };
}
