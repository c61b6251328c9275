// Workspaces: create one, see the members of each, and (as its owner) add and remove them.

import type { Member as WireMember, Workspace } from "memory-sdk";

import type { Context } from "../context.js";
import { confirmAction } from "../dialogs.js";
import { announce, append, clearInvalid, errorArea, field, h, markInvalid, replace, words } from "../dom.js";
import { dateTime, problemText } from "../format.js";

/** A member as services that name people answer: with their email and name. */
type Member = WireMember & { email?: string | null; name?: string | null };

/** Set when a workspace was just created: the section drawn for it moves the focus to its
 * members (the form that had it is drawn again). */
let arriveAtMembers = false;

export function renderWorkspaces(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list" });
  const members = h("section", { class: "members", "aria-labelledby": "members-title" });

  // Where "Create a workspace" (the keys' empty state) lands.
  const name = h("input", { type: "text", maxlength: 100, required: true, autocomplete: "off", "data-arrival-focus": true });
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
    clearInvalid(name);
    if (name.value.trim() === "") {
      createErrors.show("Give the workspace a name, such as your team's or project's.");
      markInvalid(name, createErrors.element);
      return;
    }
    app
      .call(() => app.client.workspaces.createWorkspace(name.value.trim()))
      .then(async (workspace) => {
        name.value = "";
        await app.loadWorkspaces();
        announce(`Workspace ${workspace.name} created.`);
        arriveAtMembers = true;
        app.choose(workspace.id);
      })
      .catch((error: unknown) => {
        createErrors.show(problemText(error));
        markInvalid(name, createErrors.element);
      });
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
    const arriving = arriveAtMembers;
    arriveAtMembers = false;
    if (shown !== undefined) void showMembers(shown, arriving);
  }

  function row(workspace: Workspace): HTMLTableRowElement {
    const open = h("button", { type: "button", class: "secondary small", "aria-label": `Members of ${workspace.name}` }, "Members");
    open.addEventListener("click", () => {
      // In place: the list stays, the members show below it and take the focus (on a phone
      // the page would otherwise jump to its top with the members below the fold).
      app.pick(workspace.id);
      for (const other of list.querySelectorAll("tr.selected")) other.classList.remove("selected");
      open.closest("tr")?.classList.add("selected");
      void showMembers(workspace, true);
    });
    return h(
      "tr",
      { "data-workspace-id": workspace.id, class: workspace.id === app.current ? "selected" : null },
      h("th", { scope: "row", "data-label": "Name", class: "label" }, words(workspace.name)),
      h("td", { "data-label": "Id" }, h("code", {}, workspace.id)),
      h("td", { "data-label": "Your role" }, workspace.role ?? "member"),
      h("td", { "data-label": "Created" }, h("time", { datetime: workspace.createdAt }, dateTime(workspace.createdAt))),
      h("td", { "data-label": "Members" }, open),
    );
  }

  async function showMembers(workspace: Workspace, focus = false): Promise<void> {
    const owner = workspace.ownerId === app.me?.userId;
    const memberErrors = errorArea();
    const table = h("div", { class: "list", "aria-busy": "true" });
    const title = h("h2", { id: "members-title", tabindex: "-1", class: "label" }, `Members of ${workspace.name}`);
    replace(members, title, memberErrors.element, table);
    if (focus) {
      title.focus({ preventScroll: true });
      title.scrollIntoView({ block: "start" });
    }
    if (owner) {
      append(members, addForm(workspace, memberErrors, () => void refresh()));
    } else {
      append(members, h("p", { class: "hint" }, "Only the workspace's owner adds or removes members."));
    }

    async function refresh(): Promise<void> {
      try {
        const found: Member[] = await app.call(() => app.client.workspaces.listMembers(workspace.id));
        replace(table, membersTable(workspace, found, owner, memberErrors, () => void refresh()));
      } catch (error) {
        memberErrors.show(problemText(error), () => void refresh());
      } finally {
        table.setAttribute("aria-busy", "false");
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
    const headings = ["Person", "Role", "Added"];
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
          const copy = h("button", { type: "button", class: "link", "aria-label": `Copy id of ${app.personName(member)}`, title: member.userId }, "Copy id");
          copy.addEventListener("click", () => {
            navigator.clipboard.writeText(member.userId).then(
              () => announce("The user id was copied."),
              () => announce("Copying was blocked by the browser."),
            );
          });
          const email = member.email ?? null;
          const cells = [
            h(
              "th",
              { scope: "row", "data-label": "Person", class: "label" },
              h("span", { class: "person" }, words(app.personName(member))),
              you,
              email !== null && member.name != null ? h("span", { class: "email block" }, email) : null,
              member.name == null && email == null ? h("span", { class: "hint block" }, "No name or email known yet") : null,
              copy,
            ),
            h("td", { "data-label": "Role" }, member.role),
            h("td", { "data-label": "Added" }, h("time", { datetime: member.addedAt }, dateTime(member.addedAt))),
          ];
          if (owner) {
            const actions = h("td", { "data-label": "Actions", class: "row-actions" });
            if (member.role !== "owner") {
              const remove = h("button", { type: "button", class: "danger small", "aria-label": `Remove ${app.personName(member)}` }, "Remove");
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
    const userId = h("input", { type: "text", required: true, autocomplete: "off", spellcheck: "false", placeholder: "name@example.com" });
    // What was added, on the page (not only announced): the list below may be long.
    const added = h("p", { class: "notice added", role: "status" });
    added.hidden = true;
    const form = h(
      "form",
      { class: "inline-form", "aria-label": `Add a member to ${workspace.name}` },
      field(
        "Email of the new member",
        userId,
        "The email they sign in with (they must have signed in to this dashboard once), or their user id.",
      ),
      h("button", { type: "submit", class: "primary" }, "Add member"),
      added,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      memberErrors.clear();
      clearInvalid(userId);
      added.hidden = true;
      const id = userId.value.trim();
      if (id === "") {
        memberErrors.show("Enter the email they sign in with.");
        markInvalid(userId, memberErrors.element);
        return;
      }
      app
        .call(() => app.client.workspaces.addMember(workspace.id, id))
        .then((member: Member) => {
          userId.value = "";
          added.textContent = `${app.personName(member)} was added to ${workspace.name}.`;
          added.hidden = false;
          refresh();
        })
        .catch((error: unknown) => {
          memberErrors.show(problemText(error));
          markInvalid(userId, memberErrors.element);
        });
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
      title: `Remove ${app.personName(member)}?`,
      message: `They lose access to ${workspace.name}, and their keys for it stop working on their next request.`,
      confirm: "Remove member",
      danger: true,
    });
    if (!sure) return;
    try {
      await app.call(() => app.client.workspaces.removeMember(workspace.id, member.userId));
      announce(`${app.personName(member)} removed from ${workspace.name}.`);
      refresh();
    } catch (error) {
      memberErrors.show(problemText(error));
    }
  }

  function load(): void {
    errors.clear();
    app
      .loadWorkspaces()
      .then(draw)
      .catch((error: unknown) => errors.show(problemText(error), load));
  }
  load();
}
