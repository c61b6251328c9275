// The dashboard's entry point: finish a sign-in coming back from the login provider, or
// resume this tab's session, or show the sign-in screen.

import { AuthenticationError, MemoryClient, OAuthError } from "memory-sdk";

import { revokeRefreshToken } from "./api.js";
import { App } from "./app.js";
import { apiEndpoint, loginProvider, pageAddress, type LoginProvider } from "./config.js";
import { errorArea, h, replace } from "./dom.js";
import { problemText, signInAgain } from "./format.js";
import { beginSignIn, finishSignIn, isCallback } from "./signin.js";
import { forgetAll, loadTokens, saveTokens } from "./storage.js";

let app: App | undefined;

function root(): HTMLElement {
  const element = document.getElementById("app");
  if (element === null) throw new Error("The page has no #app element.");
  return element;
}

/**
 * Signs out: the service revokes the session's refresh token (and every token refreshed from
 * it) first; then the session and every stored value leave the tab, and the sign-in screen
 * comes back. When the service cannot be told, the tab is cleared all the same, and says so.
 */
async function signOut(provider: LoginProvider | null, reason?: string): Promise<void> {
  const refreshToken = app?.refreshToken ?? loadTokens()?.refreshToken;
  app?.stop();
  app = undefined;
  const revoked = refreshToken === undefined || (await revokeRefreshToken(apiEndpoint(), refreshToken));
  forgetAll();
  history.replaceState(null, "", window.location.pathname);
  const message = reason ?? "You are signed out.";
  showSignIn(
    provider,
    revoked ? message : `${message} The service could not be told, so the session may work elsewhere until it expires.`,
  );
}

function showSignIn(provider: LoginProvider | null, message?: string, isError = false): void {
  const errors = errorArea();
  const main = h("main", { id: "main", class: "signin", tabindex: "-1" });
  const intro = h(
    "p",
    {},
    "Manage the API keys your apps use to call the memory service, and the workspaces you share with your team.",
  );
  if (provider === null) {
    replace(
      main,
      h("h1", {}, "memory-auth dashboard"),
      intro,
      h(
        "p",
        { class: "warning" },
        "This service has no login provider for the dashboard yet. Its operator sets DASHBOARD_LOGIN (see the README).",
      ),
    );
  } else {
    const button = h("button", { type: "button", class: "primary large" }, "Sign in");
    button.addEventListener("click", () => {
      errors.clear();
      button.disabled = true;
      beginSignIn(provider, pageAddress()).catch((error: unknown) => {
        button.disabled = false;
        errors.show(problemText(error));
      });
    });
    replace(
      main,
      h("h1", {}, "memory-auth dashboard"),
      intro,
      message === undefined ? null : h("p", { class: isError ? "error" : "notice", role: isError ? "alert" : "status" }, message),
      errors.element,
      h("p", {}, button),
      h("p", { class: "hint" }, `You sign in at ${new URL(provider.issuer).host}.`),
    );
  }
  document.title = "Sign in · memory-auth dashboard";
  replace(root(), main);
}

async function startApp(provider: LoginProvider | null): Promise<void> {
  const tokens = loadTokens();
  if (tokens === null) {
    showSignIn(provider);
    return;
  }
  const started = new App(root(), apiEndpoint(), tokens, (reason) => void signOut(provider, reason));
  app = started;
  try {
    await started.start();
  } catch (error) {
    if (app !== started) return; // the session ended and the app has signed out already
    started.stop();
    app = undefined;
    if (error instanceof AuthenticationError || error instanceof OAuthError) {
      forgetAll();
      showSignIn(provider, signInAgain(problemText(error)), true);
    } else {
      // An outage is no reason to lose the session: keep it, and offer to try again.
      showUnavailable(provider, problemText(error));
    }
  }
}

function showUnavailable(provider: LoginProvider | null, problem: string): void {
  const retry = h("button", { type: "button", class: "primary" }, "Try again");
  retry.addEventListener("click", () => void startApp(provider));
  const signOutButton = h("button", { type: "button", class: "secondary" }, "Sign out");
  signOutButton.addEventListener("click", () => void signOut(provider));
  replace(
    root(),
    h(
      "main",
      { id: "main", class: "signin" },
      h("h1", {}, "memory-auth dashboard"),
      h("p", { class: "error", role: "alert" }, problem),
      h("p", { class: "actions-start" }, retry, signOutButton),
    ),
  );
}

async function boot(): Promise<void> {
  let provider: LoginProvider | null;
  try {
    provider = await loginProvider();
  } catch (error) {
    replace(root(), h("main", { id: "main", class: "signin" }, h("h1", {}, "memory-auth dashboard"), h("p", { class: "error", role: "alert" }, problemText(error))));
    return;
  }
  const parameters = new URLSearchParams(window.location.search);
  if (isCallback(parameters)) {
    // The code and state leave the address bar (and the history) before anything else.
    history.replaceState(null, "", window.location.pathname);
    if (provider === null) {
      showSignIn(provider);
      return;
    }
    try {
      const tokens = await finishSignIn(provider, parameters, new MemoryClient({ endpoint: apiEndpoint() }));
      saveTokens(tokens);
    } catch (error) {
      showSignIn(provider, problemText(error), true);
      return;
    }
  }
  await startApp(provider);
}

void boot();
