// Where the page is and whom it signs in with. The API shares the page's origin: it is the
// folder above /dashboard/, wherever the stage mounts it (a custom domain, or /v1api/).

export interface LoginProvider {
  issuer: string;
  clientId: string;
  tokenEndpoint?: string;
}

/** The API's base URL, e.g. https://auth.example.com or https://…/v1api. */
export function apiEndpoint(): string {
  return new URL("..", window.location.href).toString().replace(/\/+$/, "");
}

/** The page's own address without query or fragment: the OAuth redirect URI. */
export function pageAddress(): string {
  return new URL(".", window.location.href).toString();
}

/** The stage's login provider (DASHBOARD_LOGIN), or null when it has none. */
export async function loginProvider(): Promise<LoginProvider | null> {
  const response = await fetch(new URL("config.json", pageAddress()), {
    headers: { Accept: "application/json" },
  });
  const body = (await response.json().catch(() => null)) as
    | { login?: LoginProvider | null; detail?: string }
    | null;
  if (!response.ok) {
    throw new Error(body?.detail ?? `The dashboard's configuration could not be read (${response.status}).`);
  }
  return body?.login ?? null;
}
