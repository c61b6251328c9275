// The frame of a section that lists what belongs to the workspace chosen in the switcher and
// that only its owner manages (trust policies, service clients, webhooks): its heading and
// intro, the chooser when no workspace is chosen, a member's explanation, the list's loading
// with "Try again", its toolbar, empty state and table, and a row's action buttons.

import type { Workspace } from "memory-sdk";

import type { Context } from "../context.js";
import { confirmAction, type Confirmation } from "../dialogs.js";
import { announce, append, errorArea, h, replace, uid } from "../dom.js";
import { problemText } from "../format.js";

export type ErrorArea = ReturnType<typeof errorArea>;

export interface OwnedSpec {
  title: string;
  intro: string;
  /** What the section lists, in the plural: "service clients". */
  things: string;
  /** Why a member of the chosen workspace sees none, and whom to ask. */
  forMembers: string;
  /** Shown when the person owns no workspace. */
  noWorkspace: string;
}

export interface OwnedSection {
  workspace: Workspace;
  body: HTMLElement;
  errors: ErrorArea;
}

/**
 * Draws the section's heading and intro. Answers the chosen workspace when the person owns it;
 * otherwise draws the chooser of their own workspaces (none chosen) or a member's explanation,
 * and answers undefined.
 */
export function ownedSection(app: Context, main: HTMLElement, spec: OwnedSpec): OwnedSection | undefined {
  const errors = errorArea();
  const body = h("div", { class: "list", "aria-live": "polite" });
  append(main, h("h1", {}, spec.title), h("p", { class: "intro" }, spec.intro), errors.element, body);

  const workspace = app.workspaces.find((w) => w.id === app.current);
  if (workspace === undefined) {
    drawChooser(app, body, spec);
    return undefined;
  }
  if (workspace.role !== undefined && workspace.role !== "owner") {
    replace(body, empty(`Only the owner of ${workspace.name} manages its ${spec.things}`, spec.forMembers));
    return undefined;
  }
  return { workspace, body, errors };
}

function drawChooser(app: Context, body: HTMLElement, spec: OwnedSpec): void {
  const owned = app.workspaces.filter((w) => w.role === undefined || w.role === "owner");
  if (owned.length === 0) {
    replace(body, empty("No workspace of yours", spec.noWorkspace));
    return;
  }
  replace(
    body,
    h("p", {}, `Choose the workspace whose ${spec.things} you want to see:`),
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

/** An empty state: what is missing, and what to do first. */
export function empty(heading: string, ...text: (Node | string)[]): HTMLElement {
  return h("div", { class: "empty" }, h("h2", {}, heading), h("p", {}, ...text));
}

/**
 * Loads the list and draws it. A refusal or an outage is shown with "Try again"; with
 * `clearOnError`, what was drawn before leaves the page (no stale actions). With `refocus`,
 * the focus goes to the list's table once drawn.
 */
export function loader<T>(
  section: OwnedSection,
  main: HTMLElement,
  fetch: () => Promise<T>,
  draw: (found: T) => void,
  clearOnError = false,
): (refocus?: boolean) => Promise<void> {
  const { body, errors } = section;
  const load = async (refocus = false): Promise<void> => {
    errors.clear();
    body.setAttribute("aria-busy", "true");
    try {
      draw(await fetch());
      if (refocus) (body.querySelector<HTMLElement>("table") ?? main).focus();
    } catch (error) {
      if (clearOnError) replace(body);
      errors.show(problemText(error), () => void load(refocus));
    } finally {
      body.setAttribute("aria-busy", "false");
    }
  };
  return load;
}

/** The list's toolbar: what it lists, and the button that adds one. */
export function toolbar(text: string, button: HTMLButtonElement): HTMLElement {
  return h("div", { class: "toolbar" }, h("p", {}, text), button);
}

/** A table of rows with a caption for screen readers; the focus can land on it. */
export function listTable(className: string, caption: string, headings: readonly string[], rows: HTMLTableRowElement[]): HTMLTableElement {
  return h(
    "table",
    { class: className, tabindex: "-1" },
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, ...headings.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...rows),
  );
}

/** A row's action button: `work` runs on a click; what it throws is shown in `errors`. */
export function rowAction(
  text: string,
  label: string,
  errors: ErrorArea,
  work: () => Promise<void>,
  className = "danger small",
): HTMLButtonElement {
  const button = h("button", { type: "button", class: className, "aria-label": label, "data-action": text }, text);
  button.addEventListener("click", () => {
    errors.clear();
    void work().catch((error: unknown) => errors.show(problemText(error)));
  });
  return button;
}

/** Asks `question` first; once confirmed, does `work`, says `done` and loads the list again
 * with the focus on it. */
export async function confirmThen(
  question: Confirmation,
  work: () => Promise<unknown>,
  done: string,
  load: (refocus?: boolean) => Promise<void>,
): Promise<void> {
  if (!(await confirmAction(question))) return;
  await work();
  announce(done);
  await load(true);
}

/** A fieldset of checkboxes, one a value; `chosen()` answers the ones checked. */
export function checkboxes<T extends string>(
  legend: string,
  values: readonly T[],
  checked: (value: T) => boolean,
  label: (value: T) => string = (value) => value,
): { element: HTMLFieldSetElement; chosen(): T[] } {
  const boxes = values.map((value) => {
    const id = uid("choice");
    const box = h("input", { type: "checkbox", id, value, checked: checked(value) });
    return { value, box, wrapper: h("div", { class: "choice" }, box, h("label", { for: id }, label(value))) };
  });
  return {
    element: h("fieldset", {}, h("legend", {}, legend), h("div", { class: "choices" }, ...boxes.map((b) => b.wrapper))),
    chosen: () => boxes.filter((b) => b.box.checked).map((b) => b.value),
  };
}
