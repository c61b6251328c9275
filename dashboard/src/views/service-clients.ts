// Service clients: machines that get a workspace's tokens by signing with their own private
// key (private_key_jwt); the owner registers the public half, pasted as a JWK Set or named by
// a JWKS URI. Per workspace, and only its owner manages them; anyone else is told why.

import type { NewServiceClient, ServiceClient } from "../api.js";
import type { Context } from "../context.js";
import { formAnswer } from "../dialogs.js";
import { announce, field, h, replace, uid } from "../dom.js";
import { dateTime } from "../format.js";
import { DATA_PLANE_SCOPES } from "../requests.js";
import { checkboxes, confirmThen, empty, listTable, loader, ownedSection, rowAction, toolbar } from "./owned.js";

export function renderServiceClients(app: Context, main: HTMLElement): void {
  const section = ownedSection(app, main, {
    title: "Service clients",
    intro:
      "A service client is a machine that holds its own private key and gets short-lived tokens of a workspace " +
      "with it. You register only its public key: no secret is stored here or sent anywhere.",
    things: "service clients",
    forMembers: "Service clients work in the workspace without a person: ask its owner to register the machine you need.",
    noWorkspace: "Service clients belong to a workspace, and only its owner manages them. Create a workspace under Workspaces first.",
  });
  if (section === undefined) return;
  const { workspace: current, body, errors } = section;
  const load = loader(section, main, () => app.call(() => app.api.listServiceClients(current.id)), draw, true);

  function draw(clients: ServiceClient[]): void {
    const create = h("button", { type: "button", class: "primary" }, "Register service client");
    create.addEventListener("click", () => void register());
    const tools = toolbar(`Service clients of ${current.name}`, create);
    if (clients.length === 0) {
      replace(
        body,
        tools,
        empty("No service clients yet", "Register a machine with its public key (a JWK Set) or the https URL where it publishes its keys."),
      );
      return;
    }
    const headings = ["Name", "Client id", "Keys", "Scopes", "Created", "Actions"];
    replace(body, tools, listTable("policies", `Service clients of ${current.name}`, headings, clients.map(row)));
  }

  function row(client: ServiceClient): HTMLTableRowElement {
    const remove = rowAction("Delete", `Delete service client ${client.name}`, errors, () => deleteClient(client));
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
    const question = {
      title: `Delete service client ${client.name}?`,
      message:
        `The machine can no longer get tokens for ${current.name}, and the tokens it holds are refused from ` +
        "their next request. This cannot be undone.",
      confirm: "Delete service client",
      danger: true,
    };
    const work = (): Promise<void> => app.call(() => app.api.deleteServiceClient(current.id, client.clientId));
    await confirmThen(question, work, `Service client ${client.name} deleted.`, load);
  }

  async function register(): Promise<void> {
    const form = clientFields();
    const created = await formAnswer({
      title: `Register a service client in ${current.name}`,
      fields: form.fields,
      submit: "Register",
      onSubmit: async () => {
        const request = form.request();
        return app.call(() => app.api.createServiceClient(current.id, request));
      },
    });
    if (created === undefined) return;
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
  const scopes = checkboxes("Scopes its tokens get", DATA_PLANE_SCOPES, (scope) => scope === "memory");
  return {
    fields: [field("Name", name, "What the machine is, in words."), source, jwksField, uriField, scopes.element],
    request(): NewServiceClient {
      const chosen = scopes.chosen();
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
