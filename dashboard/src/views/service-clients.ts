// Service clients: machines that get a workspace's tokens by signing with their own private
// key (private_key_jwt); the owner registers the public half, pasted as a JWK Set or named by
// a JWKS URI. Per workspace, and only its owner manages them; anyone else is told why.

import type { Workspace } from "memory-sdk";

import type { NewServiceClient, ServiceClient } from "../api.js";
import type { Context } from "../context.js";
import { confirmAction, formDialog } from "../dialogs.js";
import { announce, append, errorArea, field, h, replace, uid } from "../dom.js";
import { dateTime, problemText } from "../format.js";
import { DATA_PLANE_SCOPES } from "../requests.js";

export function renderServiceClients(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const body = h("div", { class: "list", "aria-live": "polite" });
  append(
    main,
    h("h1", {}, "Service clients"),
    h(
      "p",
      { class: "intro" },
      "A service client is a machine that holds its own private key and gets short-lived tokens of a workspace " +
        "with it. You register only its public key: no secret is stored here or sent anywhere.",
    ),
    errors.element,
    body,
  );

  const workspace = app.workspaces.find((w) => w.id === app.current);
  if (workspace === undefined) {
    drawChooser();
    return;
  }
  if (workspace.role !== undefined && workspace.role !== "owner") {
    replace(
      body,
      h(
        "div",
        { class: "empty" },
        h("h2", {}, `Only the owner of ${workspace.name} manages its service clients`),
        h("p", {}, "Service clients work in the workspace without a person: ask its owner to register the machine you need."),
      ),
    );
    return;
  }
  const current: Workspace = workspace;
  let clients: ServiceClient[] = [];

  function drawChooser(): void {
    const owned = app.workspaces.filter((w) => w.role === undefined || w.role === "owner");
    if (owned.length === 0) {
      replace(
        body,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No workspace of yours"),
          h("p", {}, "Service clients belong to a workspace, and only its owner manages them. Create a workspace under Workspaces first."),
        ),
      );
      return;
    }
    replace(
      body,
      h("p", {}, "Choose the workspace whose service clients you want to see:"),
      h(
        "ul",
        { class: "chooser" },
        ...owned.map((w) => {
          const pick = h("button", { type: "button", class: "link" }, w.name);
          pick.addEventListener("click", () => app.choose(w.id));
          return h("li", {}, pick);
        }),
      ),
    );
  }

  async function load(refocus = false): Promise<void> {
    errors.clear();
    body.setAttribute("aria-busy", "true");
    try {
      clients = await app.call(() => app.api.listServiceClients(current.id));
      draw();
      if (refocus) (body.querySelector<HTMLElement>("table") ?? main).focus();
    } catch (error) {
      replace(body);
      errors.show(problemText(error), () => void load(refocus));
    } finally {
      body.setAttribute("aria-busy", "false");
    }
  }

  function draw(): void {
    const create = h("button", { type: "button", class: "primary" }, "Register service client");
    create.addEventListener("click", () => void register());
    const toolbar = h("div", { class: "toolbar" }, h("p", {}, `Service clients of ${current.name}`), create);
    if (clients.length === 0) {
      replace(
        body,
        toolbar,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No service clients yet"),
          h("p", {}, "Register a machine with its public key (a JWK Set) or the https URL where it publishes its keys."),
        ),
      );
      return;
    }
    replace(
      body,
      toolbar,
      h(
        "table",
        { class: "policies", tabindex: "-1" },
        h("caption", { class: "visually-hidden" }, `Service clients of ${current.name}`),
        h("thead", {}, h("tr", {}, ...["Name", "Client id", "Keys", "Scopes", "Created", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...clients.map(row)),
      ),
    );
  }

  function row(client: ServiceClient): HTMLTableRowElement {
    const remove = h(
      "button",
      { type: "button", class: "danger small", "aria-label": `Delete service client ${client.name}`, "data-action": "Delete" },
      "Delete",
    );
    remove.addEventListener("click", () => {
      errors.clear();
      void deleteClient(client).catch((error: unknown) => errors.show(problemText(error)));
    });
    const keys =
      client.jwksUri !== null
        ? `published at ${client.jwksUri}`
        : `${client.jwks?.keys.length ?? 0} key${client.jwks?.keys.length === 1 ? "" : "s"} registered`;
    return h(
      "tr",
      { "data-client-id": client.clientId },
      h("th", { scope: "row", "data-label": "Name", class: "label" }, client.name),
      h("td", { "data-label": "Client id", class: "wrap" }, h("code", {}, client.clientId)),
      h("td", { "data-label": "Keys", class: "wrap" }, keys),
      h("td", { "data-label": "Scopes" }, client.scopes.join(", ")),
      h("td", { "data-label": "Created" }, h("time", { datetime: client.createdAt }, dateTime(client.createdAt))),
      h("td", { "data-label": "Actions", class: "row-actions" }, remove),
    );
  }

  async function deleteClient(client: ServiceClient): Promise<void> {
    const sure = await confirmAction({
      title: `Delete service client ${client.name}?`,
      message:
        `The machine can no longer get tokens for ${current.name}, and the tokens it holds are refused from ` +
        "their next request. This cannot be undone.",
      confirm: "Delete service client",
      danger: true,
    });
    if (!sure) return;
    await app.call(() => app.api.deleteServiceClient(current.id, client.clientId));
    announce(`Service client ${client.name} deleted.`);
    await load(true);
  }

  async function register(): Promise<void> {
    const form = clientFields();
    let created: ServiceClient | undefined;
    const ok = await formDialog({
      title: `Register a service client in ${current.name}`,
      fields: form.fields,
      submit: "Register",
      onSubmit: async () => {
        const request = form.request();
        created = await app.call(() => app.api.createServiceClient(current.id, request));
      },
    });
    if (!ok || created === undefined) return;
    announce(`Service client ${created.name} registered: its client id is ${created.clientId}.`);
    await load(true);
  }

  void load();
}

/** The registration form; `request()` throws the first problem in words (the dialog shows it). */
function clientFields(): { fields: Node[]; request(): NewServiceClient } {
  const name = h("input", { type: "text", autocomplete: "off", maxlength: 100, placeholder: "e.g. nightly sync" });
  const pastedId = uid("key-source");
  const uriId = uid("key-source");
  const pasted = h("input", { type: "radio", name: pastedId, id: pastedId, value: "jwks", checked: true });
  const byUri = h("input", { type: "radio", name: pastedId, id: uriId, value: "uri" });
  const source = h(
    "fieldset",
    {},
    h("legend", {}, "Its public keys"),
    h(
      "div",
      { class: "choices" },
      h("div", { class: "choice" }, pasted, h("label", { for: pastedId }, "Paste a JWK Set")),
      h("div", { class: "choice" }, byUri, h("label", { for: uriId }, "A JWKS URI")),
    ),
  );
  const jwks = h("textarea", { rows: 5, spellcheck: "false", placeholder: '{"keys": [{"kty": "EC", "crv": "P-256", "x": "…", "y": "…"}]}' });
  const uri = h("input", { type: "url", autocomplete: "off", spellcheck: "false", placeholder: "https://machines.example.com/jwks.json" });
  const jwksField = field("JWK Set (public keys only)", jwks, "1 to 5 RS256 or ES256 public keys. Never paste a private key.");
  const uriField = field("JWKS URI", uri, "https and a host name; fetched at most every 30 seconds.");
  const toggle = (): void => {
    jwksField.hidden = !pasted.checked;
    uriField.hidden = pasted.checked;
  };
  pasted.addEventListener("change", toggle);
  byUri.addEventListener("change", toggle);
  toggle();
  const scopeBoxes = DATA_PLANE_SCOPES.map((scope) => {
    const id = uid("client-scope");
    const box = h("input", { type: "checkbox", id, value: scope, checked: scope === "memory" });
    return { scope, box, wrapper: h("div", { class: "choice" }, box, h("label", { for: id }, scope)) };
  });
  const scopes = h("fieldset", {}, h("legend", {}, "Scopes its tokens get"), h("div", { class: "choices" }, ...scopeBoxes.map((s) => s.wrapper)));
  return {
    fields: [field("Name", name, "What the machine is, in words."), source, jwksField, uriField, scopes],
    request(): NewServiceClient {
      const chosen = scopeBoxes.filter((s) => s.box.checked).map((s) => s.scope);
      if (name.value.trim() === "") throw new Error("Give the machine a name.");
      if (chosen.length === 0) throw new Error("Choose at least one scope.");
      if (!pasted.checked) {
        if (!uri.value.trim().startsWith("https://")) throw new Error("The JWKS URI must start with https://.");
        return { name: name.value.trim(), scopes: chosen, jwksUri: uri.value.trim() };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(jwks.value);
      } catch {
        throw new Error("The JWK Set is not JSON: paste the whole {\"keys\": [...]} document.");
      }
      const keys = (parsed as { keys?: unknown }).keys;
      if (typeof parsed !== "object" || parsed === null || !Array.isArray(keys)) {
        throw new Error("The JWK Set must be an object with a list of keys.");
      }
      return { name: name.value.trim(), scopes: chosen, jwks: { keys } };
    },
  };
}
