// Workspaces: create one, see the members of each, and (as its owner) add and remove them.

import type { Member, Workspace } from "memory-sdk";

import type { App } from "../app.js";
import { confirmAction } from "../dialogs.js";
import { announce, append, errorArea, field, h, replace } from "../dom.js";
import { dateTime, problemText } from "../format.js";

export function renderWorkspaces(app: App, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list" });
  const members = h("section", { class: "members", "aria-labelledby": "members-title" });

  const name = h("input", { type: "text", maxlength: 100, required: true, autocomplete: "off" });
  const createErrors = errorArea();
  const create = h(
    "form",
    { class: "inline-form", "aria-label": "Create a workspace" },
    field("New workspace name", name),
    h("button", { type: "submit", class: "primary" }, "Create workspace"),
    createErrors.element,
  );
  create.addEventListener("submit", (event) => {
    event.preventDefault();
    createErrors.clear();
    if (name.value.trim() === "") {
      createErrors.show("Give the workspace a name, such as your team's or project's.");
      name.focus();
      return;
    }
    app
      .call(() => app.client.workspaces.createWorkspace(name.value.trim()))
      .then(async (workspace) => {
        name.value = "";
        await app.loadWorkspaces();
        announce(`Workspace ${workspace.name} created.`);
        app.choose(workspace.id);
      })
      .catch((error: unknown) => createErrors.show(problemText(error)));
  });

  append(
    main,
    h("h1", {}, "Workspaces"),
    h(
      "p",
      { class: "intro" },
      "A workspace holds memory shared by its members. Its owner adds and removes members; " +
        "each member creates their own keys for it.",
    ),
    create,
    errors.element,
    list,
    members,
  );

  function draw(): void {
    if (app.workspaces.length === 0) {
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No workspaces yet"),
          h("p", {}, "Create your first workspace above, then create a workspace key for your app under API keys."),
        ),
      );
      replace(members);
      return;
    }
    replace(
      list,
      h(
        "table",
        { class: "workspaces" },
        h("caption", { class: "visually-hidden" }, "Your workspaces"),
        h(
          "thead",
          {},
          h("tr", {}, ...["Name", "Id", "Your role", "Created", "Members"].map((t) => h("th", { scope: "col" }, t))),
        ),
        h("tbody", {}, ...app.workspaces.map(row)),
      ),
    );
    const shown = app.workspaces.find((w) => w.id === app.current) ?? app.workspaces[0];
    if (shown !== undefined) void showMembers(shown);
  }

  function row(workspace: Workspace): HTMLTableRowElement {
    const open = h("button", { type: "button", class: "secondary small", "aria-label": `Members of ${workspace.name}` }, "Members");
    open.addEventListener("click", () => app.choose(workspace.id));
    return h(
      "tr",
      { "data-workspace-id": workspace.id, class: workspace.id === app.current ? "selected" : null },
      h("th", { scope: "row", "data-label": "Name" }, workspace.name),
      h("td", { "data-label": "Id" }, h("code", {}, workspace.id)),
      h("td", { "data-label": "Your role" }, workspace.role ?? "member"),
      h("td", { "data-label": "Created" }, h("time", { datetime: workspace.createdAt }, dateTime(workspace.createdAt))),
      h("td", { "data-label": "Members" }, open),
    );
  }

  async function showMembers(workspace: Workspace): Promise<void> {
    const owner = workspace.ownerId === app.me?.userId;
    const memberErrors = errorArea();
    const table = h("div", { class: "list" });
    replace(members, h("h2", { id: "members-title" }, `Members of ${workspace.name}`), memberErrors.element, table);
    if (owner) {
      append(members, addForm(workspace, memberErrors, () => void refresh()));
    } else {
      append(members, h("p", { class: "hint" }, "Only the workspace's owner adds or removes members."));
    }

    async function refresh(): Promise<void> {
      try {
        const found = await app.call(() => app.client.workspaces.listMembers(workspace.id));
        replace(table, membersTable(workspace, found, owner, memberErrors, () => void refresh()));
      } catch (error) {
        memberErrors.show(problemText(error));
      }
    }
    await refresh();
  }

  function membersTable(
    workspace: Workspace,
    found: Member[],
    owner: boolean,
    memberErrors: ReturnType<typeof errorArea>,
    refresh: () => void,
  ): HTMLElement {
    const headings = ["User", "Role", "Added"];
    if (owner) headings.push("Actions");
    return h(
      "table",
      { class: "member-list" },
      h("caption", { class: "visually-hidden" }, `Members of ${workspace.name}`),
      h("thead", {}, h("tr", {}, ...headings.map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        ...found.map((member) => {
          const you = member.userId === app.me?.userId ? " (you)" : "";
          const cells = [
            h("th", { scope: "row", "data-label": "User" }, h("code", {}, member.userId), you),
            h("td", { "data-label": "Role" }, member.role),
            h("td", { "data-label": "Added" }, h("time", { datetime: member.addedAt }, dateTime(member.addedAt))),
          ];
          if (owner) {
            const actions = h("td", { "data-label": "Actions", class: "row-actions" });
            if (member.role !== "owner") {
              const remove = h("button", { type: "button", class: "danger small", "aria-label": `Remove ${member.userId}` }, "Remove");
              remove.addEventListener("click", () => {
                memberErrors.clear();
                void removeMember(workspace, member, memberErrors, refresh);
              });
              append(actions, remove);
            }
            cells.push(actions);
          }
          return h("tr", { "data-user-id": member.userId }, ...cells);
        }),
      ),
    );
  }

  function addForm(workspace: Workspace, memberErrors: ReturnType<typeof errorArea>, refresh: () => void): HTMLElement {
    const userId = h("input", { type: "text", required: true, autocomplete: "off", spellcheck: "false", placeholder: "usr_…" });
    const form = h(
      "form",
      { class: "inline-form", "aria-label": `Add a member to ${workspace.name}` },
      field(
        "User id of the new member",
        userId,
        "Ask them to sign in to this dashboard once and send you the user id shown at its top.",
      ),
      h("button", { type: "submit", class: "primary" }, "Add member"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      memberErrors.clear();
      const id = userId.value.trim();
      app
        .call(() => app.client.workspaces.addMember(workspace.id, id))
        .then(() => {
          userId.value = "";
          announce(`${id} added to ${workspace.name}.`);
          refresh();
        })
        .catch((error: unknown) => memberErrors.show(problemText(error)));
    });
    return form;
  }

  async function removeMember(
    workspace: Workspace,
    member: Member,
    memberErrors: ReturnType<typeof errorArea>,
    refresh: () => void,
  ): Promise<void> {
    const sure = await confirmAction({
      title: `Remove ${member.userId}?`,
      message: `They lose access to ${workspace.name}, and their keys for it stop working on their next request.`,
      confirm: "Remove member",
      danger: true,
    });
    if (!sure) return;
    try {
      await app.call(() => app.client.workspaces.removeMember(workspace.id, member.userId));
      announce(`${member.userId} removed from ${workspace.name}.`);
      refresh();
    } catch (error) {
      memberErrors.show(problemText(error));
    }
  }

  app
    .loadWorkspaces()
    .then(draw)
    .catch((error: unknown) => errors.show(problemText(error)));
}
