// Trust policies: which machines (CI jobs, Kubernetes service accounts) may exchange their
// platform's identity token for a token of a workspace, with no stored key. Per workspace,
// and only its owner manages them; anyone else is told why and whom to ask.

import type { NewTrustPolicy, TrustPolicy } from "../api.js";
import type { Context } from "../context.js";
import { formAnswer } from "../dialogs.js";
import { announce, append, field, h, replace, token, uid, words } from "../dom.js";
import { dateTime } from "../format.js";
import { DATA_PLANE_SCOPES, subjectMatches, subjectPreview, subjectProblem, trustPolicyRequest } from "../requests.js";
import { checkboxes, confirmThen, empty, listTable, loader, ownedSection, rowAction, toolbar } from "./owned.js";

export function renderTrustPolicies(app: Context, main: HTMLElement): void {
  const section = ownedSection(app, main, {
    title: "Trust policies",
    intro:
      "A trust policy lets a machine that already holds an identity token from its platform (a GitHub Actions job, " +
      "a GitLab pipeline, a Kubernetes service account) work in a workspace without a stored key. The first policy " +
      "whose issuer, audience, subject and claims all match the token wins.",
    things: "trust policies",
    forMembers:
      "You are a member of this workspace, not its owner. Trust policies decide which machines work in it " +
      "without a key, so only the owner can see or change them: ask them to add the policy you need.",
    noWorkspace:
      "Trust policies belong to a workspace, and only its owner manages them. Create a workspace under " +
      "Workspaces first; in workspaces others own, ask their owner.",
  });
  if (section === undefined) return;
  const { workspace: current, body, errors } = section;
  const load = loader(section, main, () => app.call(() => app.api.listTrustPolicies(current.id)), draw);

  function draw(policies: TrustPolicy[]): void {
    const create = h("button", { type: "button", class: "primary" }, "Create trust policy");
    create.addEventListener("click", () => void createPolicy());
    const tools = toolbar(`Trust policies of ${current.name}`, create);
    if (policies.length === 0) {
      replace(
        body,
        tools,
        empty(
          "No trust policies yet",
          "Without one, every machine needs an API key. Create a policy naming the issuer of your platform's tokens " +
            "and the subject of the job or service account to trust.",
        ),
      );
      return;
    }
    const headings = ["Name", "Issuer", "Audience", "Subject", "Claims", "Scopes", "Token lifetime", "Created", "Actions"];
    replace(body, tools, listTable("policies", `Trust policies of ${current.name}`, headings, policies.map(row)));
  }

  function row(policy: TrustPolicy): HTMLTableRowElement {
    const remove = rowAction("Delete", `Delete trust policy ${policy.name}`, errors, () => deletePolicy(policy));
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
    const question = {
      title: `Delete trust policy ${policy.name}?`,
      message:
        `Machines matching it can no longer exchange their tokens for ${current.name}, and the tokens they hold ` +
        "are refused from their next request. This cannot be undone.",
      confirm: "Delete policy",
      danger: true,
    };
    const work = (): Promise<void> => app.call(() => app.api.deleteTrustPolicy(current.id, policy.id));
    await confirmThen(question, work, `Trust policy ${policy.name} deleted.`, load);
  }

  async function createPolicy(): Promise<void> {
    const form = policyFields();
    const created = await formAnswer({
      title: `Create a trust policy for ${current.name}`,
      fields: form.fields,
      submit: "Create policy",
      onSubmit: async () => {
        const checked = trustPolicyRequest(form.values());
        if (!checked.ok) throw new Error(checked.problem);
        const policy: NewTrustPolicy = checked.value;
        return app.call(() => app.api.createTrustPolicy(current.id, policy));
      },
    });
    if (created === undefined) return;
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
  const scopes = checkboxes("Scopes its tokens get", DATA_PLANE_SCOPES, (scope) => scope === "memory");

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
      scopes.element,
      field("Token lifetime in minutes (optional)", lifetime, "1 to 60. Empty: 15 minutes."),
    ],
    values: () => ({
      name: name.value,
      issuer: issuer.value,
      audience: audience.value,
      subject: subject.value,
      claims: claims.value,
      scopes: scopes.chosen(),
      lifetimeMinutes: lifetime.value,
    }),
  };
}
