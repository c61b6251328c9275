// Modal dialogs on the native <dialog>: it traps focus, closes on Escape and is announced as
// a dialog. Focus goes back to what opened it.

import { problemText, worthRetrying } from "./format.js";
import { announce, append, errorArea, h, uid } from "./dom.js";

interface Modal {
  dialog: HTMLDialogElement;
  close(): void;
}

function openModal(title: string, content: Node[], onEscape?: () => void, role = "dialog"): Modal {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const titleId = uid("dialog-title");
  const dialog = h("dialog", { class: "modal", "aria-labelledby": titleId, role: role === "dialog" ? null : role });
  append(dialog, h("h2", { id: titleId }, title), ...content);
  dialog.addEventListener("cancel", (event) => {
    if (onEscape === undefined) return;
    event.preventDefault();
    onEscape();
  });
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener !== null && opener.isConnected) opener.focus();
  });
  document.body.appendChild(dialog);
  dialog.showModal();
  return { dialog, close: () => dialog.close() };
}

export interface Confirmation {
  title: string;
  message: string;
  confirm: string;
  cancel?: string;
  danger?: boolean;
}

/** Asks a yes/no question; resolves true only when the person confirms. */
export function confirmAction(question: Confirmation): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = false;
    const cancel = h("button", { type: "button", class: "secondary" }, question.cancel ?? "Cancel");
    const confirm = h("button", { type: "button", class: question.danger ? "danger" : "primary" }, question.confirm);
    const modal = openModal(
      question.title,
      [h("p", {}, question.message), h("div", { class: "actions" }, cancel, confirm)],
      undefined,
      "alertdialog",
    );
    cancel.addEventListener("click", () => modal.close());
    confirm.addEventListener("click", () => {
      answer = true;
      modal.close();
    });
    modal.dialog.addEventListener("close", () => resolve(answer));
    // The safe choice has the focus: Enter alone never revokes or removes anything.
    cancel.focus();
  });
}

export interface FormDialog {
  title: string;
  intro?: Node | string;
  fields: Node[];
  submit: string;
  danger?: boolean;
  /** Does the work; a thrown error's text is shown in the dialog, which stays open. */
  onSubmit(): Promise<void>;
}

/** A form in a dialog. Resolves true when it was submitted successfully, false if cancelled. */
export function formDialog(spec: FormDialog): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const errors = errorArea();
    const submit = h("button", { type: "submit", class: spec.danger ? "danger" : "primary" }, spec.submit);
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    const form = h(
      "form",
      { novalidate: true },
      spec.intro === undefined ? null : typeof spec.intro === "string" ? h("p", {}, spec.intro) : spec.intro,
      ...spec.fields,
      errors.element,
      h("div", { class: "actions" }, cancel, submit),
    );
    const modal = openModal(spec.title, [form]);
    cancel.addEventListener("click", () => modal.close());
    modal.dialog.addEventListener("close", () => resolve(done));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (submit.disabled) return;
      errors.clear();
      submit.disabled = true;
      submit.setAttribute("aria-busy", "true");
      spec
        .onSubmit()
        .then(() => {
          done = true;
          modal.close();
        })
        .catch((error: unknown) => {
          // The service's trouble or no answer: the same form may go through once it is over.
          const again = (): void => {
            submit.focus();
            form.requestSubmit(submit);
          };
          errors.show(problemText(error), worthRetrying(error) ? again : undefined);
        })
        .finally(() => {
          submit.disabled = false;
          submit.removeAttribute("aria-busy");
        });
    });
    const first = form.querySelector<HTMLElement>("input:not([type=hidden]), select, textarea");
    (first ?? submit).focus();
  });
}

/** A form in a dialog whose submission answers something (what it created or changed):
 * that answer once submitted, undefined when cancelled. */
export async function formAnswer<T>(spec: Omit<FormDialog, "onSubmit"> & { onSubmit(): Promise<T> }): Promise<T | undefined> {
  let answer: T | undefined;
  const ok = await formDialog({
    ...spec,
    onSubmit: async () => {
      answer = await spec.onSubmit();
    },
  });
  return ok ? answer : undefined;
}

export interface Secret {
  title: string;
  /** The plaintext key; dropped from the page when the dialog closes. */
  key: string;
  /** Shown once: a new key (create, rotate) rather than a reveal. */
  once: boolean;
  summary: string;
  /** What the value is, as the dialog words it: "key" (an API key) unless said. */
  noun?: string;
  /** The field's label: "API key" unless said. */
  label?: string;
}

/**
 * Shows a key's (or another secret's) plaintext with a copy button. Closing asks for a
 * confirmation first; then the value is wiped from the field and the dialog leaves the page.
 */
export function showSecret(secret: Secret): Promise<void> {
  const noun = secret.noun ?? "key";
  return new Promise((resolve) => {
    const fieldId = uid("secret");
    const value = h("input", {
      id: fieldId,
      class: "secret",
      type: "text",
      readonly: true,
      spellcheck: "false",
      autocomplete: "off",
      "aria-describedby": `${fieldId}-warning`,
    });
    // A property, not an attribute: the plaintext never appears in the page's markup.
    value.value = secret.key;
    const copied = h("p", { class: "copied", role: "status" });
    const copy = h("button", { type: "button", class: "primary" }, "Copy");
    const done = h("button", { type: "button", class: "secondary" }, "Done");
    const warning = secret.once
      ? "Copy it now and keep it in a secret manager. You will not see it again."
      : "Anyone holding this key can use it. Copy it into a secret manager, not into code or chat.";
    const modal = openModal(
      secret.title,
      [
        h("p", {}, secret.summary),
        h("p", { class: "warning", id: `${fieldId}-warning` }, warning),
        h("label", { for: fieldId }, secret.label ?? "API key"),
        h("div", { class: "secret-row" }, value, copy),
        copied,
        h("div", { class: "actions" }, done),
      ],
      () => void leave(),
    );
    let leaving = false;
    const leave = async (): Promise<void> => {
      if (leaving) return;
      leaving = true;
      const sure = await confirmAction({
        title: secret.once ? `Close without the ${noun}?` : `Close the ${noun}?`,
        message: secret.once
          ? `You will not see this ${noun} again. Make sure you have copied it.`
          : `The ${noun} will be hidden again. Make sure you have copied it.`,
        confirm: "Yes, close",
        cancel: `Back to the ${noun}`,
      });
      leaving = false;
      if (sure) modal.close();
      else value.focus();
    };
    copy.addEventListener("click", () => {
      navigator.clipboard
        .writeText(value.value)
        .then(() => {
          copied.textContent = "Copied to the clipboard.";
        })
        .catch(() => {
          value.select();
          copied.textContent = `Copying was blocked: the ${noun} is selected, press Ctrl+C (⌘C on a Mac).`;
        });
    });
    done.addEventListener("click", () => void leave());
    modal.dialog.addEventListener("close", () => {
      value.value = "";
      announce(`The ${noun} is no longer shown.`);
      resolve();
    });
    value.focus();
    value.select();
  });
}

/** Something to read in a dialog, with Close. Resolves when it closes. */
export function infoDialog(title: string, content: Node[]): Promise<void> {
  return new Promise((resolve) => {
    const close = h("button", { type: "button", class: "secondary" }, "Close");
    const modal = openModal(title, [...content, h("div", { class: "actions" }, close)]);
    modal.dialog.classList.add("wide");
    close.addEventListener("click", () => modal.close());
    modal.dialog.addEventListener("close", () => resolve());
    close.focus();
  });
}
