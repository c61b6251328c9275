// Trust policies: which machines (CI jobs, Kubernetes service accounts) may exchange their
// platform's identity token for a token of a workspace, with no stored key. Per workspace,
// and only its owner manages them; anyone else is told why and whom to ask.

import type { Workspace } from "memory-sdk";

import type { NewTrustPolicy, TrustPolicy } from "../api.js";
import type { Context } from "../context.js";
import { confirmAction, formDialog } from "../dialogs.js";
import { announce, append, errorArea, field, h, replace, token, uid, words } from "../dom.js";
import { dateTime, problemText } from "../format.js";
import { DATA_PLANE_SCOPES, subjectMatches, subjectPreview, subjectProblem, trustPolicyRequest } from "../requests.js";

export function renderTrustPolicies(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const body = h("div", { class: "list", "aria-live": "polite" });
  append(
    main,
    h("h1", {}, "Trust policies"),
    h(
      "p",
      { class: "intro" },
      "A trust policy lets a machine that already holds an identity token from its platform (a GitHub Actions job, " +
        "a GitLab pipeline, a Kubernetes service account) work in a workspace without a stored key. The first policy " +
        "whose issuer, audience, subject and claims all match the token wins.",
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
        h("h2", {}, `Only the owner of ${workspace.name} manages its trust policies`),
        h(
          "p",
          {},
          "You are a member of this workspace, not its owner. Trust policies decide which machines work in it " +
            "without a key, so only the owner can see or change them: ask them to add the policy you need.",
        ),
      ),
    );
    return;
  }
  const current: Workspace = workspace;
  let policies: TrustPolicy[] = [];

  function drawChooser(): void {
    const owned = app.workspaces.filter((w) => w.role === undefined || w.role === "owner");
    if (owned.length === 0) {
      replace(
        body,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No workspace of yours"),
          h(
            "p",
            {},
            "Trust policies belong to a workspace, and only its owner manages them. Create a workspace under " +
              "Workspaces first; in workspaces others own, ask their owner.",
          ),
        ),
      );
      return;
    }
    replace(
      body,
      h("p", {}, "Choose the workspace whose trust policies you want to see:"),
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
      policies = await app.call(() => app.api.listTrustPolicies(current.id));
      draw();
      if (refocus) (body.querySelector<HTMLElement>("table") ?? main).focus();
    } catch (error) {
      errors.show(problemText(error), () => void load(refocus));
    } finally {
      body.setAttribute("aria-busy", "false");
    }
  }

  function draw(): void {
    const create = h("button", { type: "button", class: "primary" }, "Create trust policy");
    create.addEventListener("click", () => void createPolicy());
    const toolbar = h("div", { class: "toolbar" }, h("p", {}, `Trust policies of ${current.name}`), create);
    if (policies.length === 0) {
      replace(
        body,
        toolbar,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No trust policies yet"),
          h(
            "p",
            {},
            "Without one, every machine needs an API key. Create a policy naming the issuer of your platform's tokens " +
              "and the subject of the job or service account to trust.",
          ),
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
        h("caption", { class: "visually-hidden" }, `Trust policies of ${current.name}`),
        h(
          "thead",
          {},
          h("tr", {}, ...["Name", "Issuer", "Audience", "Subject", "Claims", "Scopes", "Token lifetime", "Created", "Actions"].map((t) => h("th", { scope: "col" }, t))),
        ),
        h("tbody", {}, ...policies.map(row)),
      ),
    );
  }

  function row(policy: TrustPolicy): HTMLTableRowElement {
    const remove = h(
      "button",
      { type: "button", class: "danger small", "aria-label": `Delete trust policy ${policy.name}`, "data-action": "Delete" },
      "Delete",
    );
    remove.addEventListener("click", () => {
      errors.clear();
      void deletePolicy(policy).catch((error: unknown) => errors.show(problemText(error)));
    });
    const claims = Object.entries(policy.claims);
    return h(
      "tr",
      { "data-policy-id": policy.id },
      h("th", { scope: "row", "data-label": "Name", class: "label" }, words(policy.name)),
      h("td", { "data-label": "Issuer", class: "wrap" }, policy.issuer),
      h("td", { "data-label": "Audience", class: "wrap" }, policy.audience),
      h("td", { "data-label": "Subject", class: "wrap" }, token(policy.subject)),
      h("td", { "data-label": "Claims", class: "wrap" }, claims.length === 0 ? "none" : claims.map(([k, v]) => `${k} = ${v}`).join(", ")),
      h("td", { "data-label": "Scopes" }, policy.scopes.join(", ")),
      h("td", { "data-label": "Token lifetime" }, `${Math.round(policy.maxLifetimeSeconds / 60)} min`),
      h("td", { "data-label": "Created" }, h("time", { datetime: policy.createdAt }, dateTime(policy.createdAt))),
      h("td", { "data-label": "Actions", class: "row-actions" }, remove),
    );
  }

  async function deletePolicy(policy: TrustPolicy): Promise<void> {
    const sure = await confirmAction({
      title: `Delete trust policy ${policy.name}?`,
      message:
        `Machines matching it can no longer exchange their tokens for ${current.name}, and the tokens they hold ` +
        "are refused from their next request. This cannot be undone.",
      confirm: "Delete policy",
      danger: true,
    });
    if (!sure) return;
    await app.call(() => app.api.deleteTrustPolicy(current.id, policy.id));
    announce(`Trust policy ${policy.name} deleted.`);
    await load(true);
  }

  async function createPolicy(): Promise<void> {
    const form = policyFields();
    let created: TrustPolicy | undefined;
    const ok = await formDialog({
      title: `Create a trust policy for ${current.name}`,
      fields: form.fields,
      submit: "Create policy",
      onSubmit: async () => {
        const checked = trustPolicyRequest(form.values());
        if (!checked.ok) throw new Error(checked.problem);
        const policy: NewTrustPolicy = checked.value;
        created = await app.call(() => app.api.createTrustPolicy(current.id, policy));
      },
    });
    if (!ok || created === undefined) return;
    announce(`Trust policy ${created.name} created.`);
    await load(true);
  }

  void load();
}

function policyFields(): { fields: Node[]; values(): Parameters<typeof trustPolicyRequest>[0] } {
  const text = (placeholder: string): HTMLInputElement =>
    h("input", { type: "text", autocomplete: "off", spellcheck: "false", maxlength: 255, placeholder });
  const name = h("input", { type: "text", autocomplete: "off", maxlength: 100, placeholder: "e.g. deploy pipeline" });
  const issuer = text("https://token.actions.githubusercontent.com");
  issuer.type = "url";
  const audience = text("memory-service");
  const subject = text("repo:acme/agents:ref:refs/heads/main");
  const claims = h("textarea", { rows: 2, spellcheck: "false", placeholder: "repository_owner=acme" });
  const lifetime = h("input", { type: "number", min: 1, max: 60, step: 1, inputmode: "numeric", placeholder: "15" });
  const scopeBoxes = DATA_PLANE_SCOPES.map((scope) => {
    const id = uid("policy-scope");
    const box = h("input", { type: "checkbox", id, value: scope, checked: scope === "memory" });
    return { scope, box, wrapper: h("div", { class: "choice" }, box, h("label", { for: id }, scope)) };
  });
  const scopes = h("fieldset", {}, h("legend", {}, "Scopes its tokens get"), h("div", { class: "choices" }, ...scopeBoxes.map((s) => s.wrapper)));

  // The live preview: what the pattern matches, refused patterns with the service's reason,
  // and a subject to try.
  const preview = h("div", { class: "preview", role: "status", id: uid("subject-preview") });
  const tryIt = text("repo:acme/agents:ref:refs/heads/main");
  const verdict = h("p", { class: "verdict", role: "status" });
  const refresh = (): void => {
    const pattern = subject.value.trim();
    const problem = pattern === "" ? null : subjectProblem(pattern);
    if (pattern === "") {
      replace(preview, "Exact, or ending in * to match a prefix, e.g. repo:acme/agents:ref:refs/heads/*");
      preview.className = "preview";
    } else if (problem !== null) {
      replace(preview, problem);
      preview.className = "preview refused";
    } else {
      const example = subjectPreview(pattern);
      preview.className = "preview";
      replace(
        preview,
        pattern.endsWith("*") ? "Matches every subject that starts with " : "Matches exactly ",
        h("code", {}, example.matches),
        example.notMatches === null ? "" : ", not ",
        example.notMatches === null ? "" : h("code", {}, example.notMatches),
        ".",
      );
    }
    const candidate = tryIt.value.trim();
    if (candidate === "" || pattern === "" || problem !== null) replace(verdict);
    else replace(verdict, subjectMatches(pattern, candidate) ? "✓ This subject matches." : "✗ This subject does not match.");
  };
  subject.addEventListener("input", refresh);
  tryIt.addEventListener("input", refresh);
  refresh();

  const subjectField = field("Subject (sub)", subject);
  subject.setAttribute("aria-describedby", preview.id);
  append(subjectField, preview);

  return {
    fields: [
      field("Name", name, "What it trusts, in words: the pipeline or service."),
      field("Issuer", issuer, "The https URL of the platform's token issuer."),
      field("Audience (aud)", audience, "What the workload's token is issued for, as configured in its job."),
      subjectField,
      field("Try a subject", tryIt, "Type a workload's subject to see whether the pattern matches it."),
      verdict,
      field("Other claims (optional)", claims, "One name=value per line, each matched exactly; up to 10."),
      scopes,
      field("Token lifetime in minutes (optional)", lifetime, "1 to 60. Empty: 15 minutes."),
    ],
    values: () => ({
      name: name.value,
      issuer: issuer.value,
      audience: audience.value,
      subject: subject.value,
      claims: claims.value,
      scopes: scopeBoxes.filter((s) => s.box.checked).map((s) => s.scope),
      lifetimeMinutes: lifetime.value,
    }),
  };
}
