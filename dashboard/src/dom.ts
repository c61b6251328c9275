// Building the page: elements from tag, attributes and children, never from HTML strings
// (the page's CSP forbids string-to-HTML sinks outright).

type Child = Node | string | null | undefined | false;
type Listener = (event: Event) => void;
export type Attributes = Record<string, string | number | boolean | Listener | null | undefined>;

/** An element: `on…` attributes become listeners, `true` a bare attribute, false/null none. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      element.setAttribute(name, "");
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild !== null) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

let counter = 0;
/** A page-unique id for label/control and aria pairs. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** Says `message` to screen readers through the page's polite live region. */
export function announce(message: string): void {
  const region = document.getElementById("announcer");
  if (region === null) return;
  region.textContent = "";
  // A changed text is announced; the same text twice in a row would not be without this.
  window.setTimeout(() => {
    region.textContent = message;
  }, 50);
}

/** A labelled form field: label, control, optional hint (tied by aria-describedby). */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid("field");
  control.id = id;
  const wrapper = h("div", { class: "field" }, h("label", { for: id }, label), control);
  if (hint !== undefined) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    append(wrapper, h("p", { class: "hint", id: hintId }, hint));
  }
  return wrapper;
}

/** An alert area for a form's refusals; `show` fills it (with a "Try again" button when
 * given what to retry), `clear` empties it. */
export function errorArea(): { element: HTMLElement; show(message: string, retry?: () => void): void; clear(): void } {
  const element = h("div", { class: "error", role: "alert" });
  element.hidden = true;
  return {
    element,
    show(message: string, retry?: () => void) {
      element.textContent = message;
      if (retry !== undefined) {
        const again = h("button", { type: "button", class: "secondary small retry" }, "Try again");
        again.addEventListener("click", () => {
          element.hidden = true;
          retry();
        });
        append(element, " ", again);
      }
      element.hidden = false;
      // On a phone the error may sit below the fold (under the keyboard): bring it on view.
      if (element.isConnected) element.scrollIntoView({ block: "nearest" });
    },
    clear() {
      element.textContent = "";
      element.hidden = true;
    },
  };
}

/** Longer words than this may break anywhere (a pasted token); shorter ones stay whole. */
const WHOLE_WORD = 24;

/** A label or name whose words wrap whole ("Ångström" never becomes "Ångstr/öm" in a
 * narrow column); only a word longer than WHOLE_WORD may break inside. */
export function words(text: string): HTMLElement {
  const wrapper = h("span", { class: "words" });
  text.split(/(\s+)/).forEach((part) => {
    if (part === "") return;
    append(wrapper, /\s/.test(part) || [...part].length > WHOLE_WORD ? part : h("span", { class: "word" }, part));
  });
  return wrapper;
}

/** A part of a token longer than this may break inside. */
const TOKEN_PART = 40;

/** A token such as a trust subject (`repo:acme/agents:ref:refs/heads/main`) that wraps only
 * after its separators (: / @ . = ,), never mid-name. */
export function token(text: string): HTMLElement {
  const code = h("code", { class: "token" });
  for (const part of text.split(/(?<=[:/@.=,])/)) {
    append(code, [...part].length > TOKEN_PART ? part : h("span", { class: "part" }, part), h("wbr"));
  }
  code.lastChild?.remove();
  return code;
}

/** Marks a form control refused: aria-invalid, and on view (a phone's keyboard may hide
 * the error below the fold), with the focus. `clearInvalid` undoes it. */
export function markInvalid(control: HTMLElement, message?: HTMLElement): void {
  control.setAttribute("aria-invalid", "true");
  if (message !== undefined && message.id === "") message.id = uid("error");
  if (message !== undefined) {
    const described = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id !== "" && id !== message.id);
    control.setAttribute("aria-describedby", [...described, message.id].join(" "));
  }
  control.focus({ preventScroll: true });
  (message ?? control).scrollIntoView({ block: "center" });
}

export function clearInvalid(control: HTMLElement): void {
  control.removeAttribute("aria-invalid");
}
