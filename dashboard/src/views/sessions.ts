// Sessions: the person's sign-ins (this dashboard, other browsers, the SDKs), each with its
// device, address and times; "Sign out" ends one, "Sign out everywhere" ends them all. An
// ended sign-in's tokens are refused from their next request, this tab's included.

import { NotFoundError, type UserSession } from "memory-sdk";

import type { Context } from "../context.js";
import { confirmAction } from "../dialogs.js";
import { announce, append, errorArea, h, replace } from "../dom.js";
import { dateTime, deviceName, problemText } from "../format.js";

export function renderSessions(app: Context, main: HTMLElement): void {
  const errors = errorArea();
  const list = h("div", { class: "list", "aria-live": "polite", "aria-busy": "true" });
  const everywhere = h("button", { type: "button", class: "danger", id: "sign-out-everywhere" }, "Sign out everywhere");
  everywhere.hidden = true;
  everywhere.addEventListener("click", () => {
    errors.clear();
    void signOutEverywhere().catch((error: unknown) => errors.show(problemText(error)));
  });
  append(
    main,
    h("h1", {}, "Sessions"),
    h(
      "p",
      { class: "intro" },
      "Where you are signed in: this dashboard, other browsers, and scripts that signed in as you with an SDK. " +
        "Sign out of any you do not recognise: it stops working from its next request. Your API keys are not affected.",
    ),
    h("div", { class: "toolbar" }, everywhere),
    errors.element,
    list,
  );

  let sessions: UserSession[] = [];

  async function load(focusAfter?: string): Promise<void> {
    errors.clear();
    list.setAttribute("aria-busy", "true");
    try {
      sessions = await app.call(() => app.client.auth.sessions.list());
      draw();
      if (focusAfter !== undefined) refocus(focusAfter);
    } catch (error) {
      errors.show(problemText(error), () => void load(focusAfter));
    } finally {
      list.setAttribute("aria-busy", "false");
    }
  }

  /** After a row is gone, the focus goes to the row that took its place, else the table. */
  function refocus(goneId: string): void {
    const rows = [...list.querySelectorAll<HTMLElement>("tr[data-session-id]")];
    const next = rows.find((row) => row.dataset["sessionId"] !== goneId);
    (next?.querySelector<HTMLElement>("button") ?? list.querySelector<HTMLElement>("table") ?? main).focus();
  }

  function draw(): void {
    everywhere.hidden = sessions.length === 0;
    if (sessions.length === 0) {
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("h2", {}, "No sign-ins"),
          h("p", {}, "The service lists no live sign-in of yours. Each time you sign in here or with an SDK, it appears in this list."),
        ),
      );
      return;
    }
    const others = sessions.filter((s) => !s.current).length;
    replace(
      list,
      others === 0 ? h("p", { class: "hint" }, "Only this device is signed in.") : null,
      h(
        "table",
        { class: "sessions", tabindex: "-1" },
        h("caption", { class: "visually-hidden" }, "Your sign-ins, newest first"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Device", "IP address", "Signed in", "Last refreshed", "Expires", "Actions"].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        h("tbody", {}, ...sessions.map(row)),
      ),
    );
  }

  function row(session: UserSession): HTMLTableRowElement {
    const device = deviceName(session.userAgent);
    const signedIn = dateTime(session.createdAt);
    const signOut = h(
      "button",
      {
        type: "button",
        class: session.current ? "secondary small" : "danger small",
        "aria-label": session.current ? "Sign out this device" : `Sign out ${device}, signed in ${signedIn}`,
        "data-action": "Sign out",
      },
      "Sign out",
    );
    signOut.addEventListener("click", () => {
      errors.clear();
      signOut.disabled = true;
      void endOne(session)
        .catch((error: unknown) => errors.show(problemText(error)))
        .finally(() => {
          signOut.disabled = false;
        });
    });
    return h(
      "tr",
      { "data-session-id": session.id, "data-current": session.current ? "true" : null, class: session.current ? "selected" : null },
      h(
        "th",
        { scope: "row", "data-label": "Device", class: "label" },
        device,
        session.current ? h("span", {}, " ", h("span", { class: "badge active" }, "This device")) : null,
        session.userAgent === null || session.userAgent === "" ? null : h("span", { class: "detail" }, session.userAgent),
      ),
      h("td", { "data-label": "IP address", class: "wrap" }, session.ipAddress ?? "unknown"),
      h("td", { "data-label": "Signed in" }, h("time", { datetime: session.createdAt }, signedIn)),
      h(
        "td",
        { "data-label": "Last refreshed" },
        session.lastRefreshedAt === null ? "not yet" : h("time", { datetime: session.lastRefreshedAt }, dateTime(session.lastRefreshedAt)),
      ),
      h("td", { "data-label": "Expires" }, h("time", { datetime: session.expiresAt }, dateTime(session.expiresAt))),
      h("td", { "data-label": "Actions", class: "row-actions" }, signOut),
    );
  }

  async function endOne(session: UserSession): Promise<void> {
    try {
      await app.call(() => app.client.auth.sessions.revoke(session.id));
    } catch (error) {
      // Gone already (it expired, or was ended elsewhere): the list is simply out of date.
      if (!(error instanceof NotFoundError)) throw error;
    }
    if (session.current) {
      app.endThisSession();
      return;
    }
    announce(`Signed out of ${deviceName(session.userAgent)}.`);
    await load(session.id);
  }

  async function signOutEverywhere(): Promise<void> {
    const others = sessions.filter((s) => !s.current).length;
    const sure = await confirmAction({
      title: "Sign out everywhere?",
      message:
        `This ends every sign-in of yours: ${others > 0 ? `this one and ${others} other${others === 1 ? "" : "s"}` : "this one"}. ` +
        "Each is refused from its next request, and you sign in again here. Your API keys keep working.",
      confirm: "Sign out everywhere",
      danger: true,
    });
    if (!sure) return;
    everywhere.disabled = true;
    try {
      await app.call(() => app.client.auth.signOutEverywhere());
    } finally {
      everywhere.disabled = false;
    }
    app.endThisSession("You are signed out everywhere.");
  }

  void load();
}
