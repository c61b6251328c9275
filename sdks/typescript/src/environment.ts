// The one place the SDK looks at its environment. In Node, unset client options fall back
// to MEMORY_API_KEY, MEMORY_ENDPOINT and MEMORY_WORKSPACE_ID (as the Python SDK does); in a
// browser nothing is read, even where a bundler has planted a `process.env` shim.

export interface EnvironmentDefaults {
  apiKey?: string;
  endpoint?: string;
  workspaceId?: string;
}

interface NodeProcessLike {
  versions?: { node?: string };
  env?: Record<string, string | undefined>;
}

export function nodeEnv(): Record<string, string | undefined> | undefined {
  // Looked up on every call (not at import), and without Node's types: the SDK's build
  // has no `process` at all, so that the browser build cannot depend on it by accident.
  const candidate = (globalThis as { process?: NodeProcessLike }).process;
  if (typeof candidate?.versions?.node !== "string") return undefined;
  return candidate.env;
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** The defaults the environment provides: empty outside Node. */
export function environmentDefaults(): EnvironmentDefaults {
  const env = nodeEnv();
  if (env === undefined) return {};
  const defaults: EnvironmentDefaults = {};
  const apiKey = present(env["MEMORY_API_KEY"]);
  const endpoint = present(env["MEMORY_ENDPOINT"]);
  const workspaceId = present(env["MEMORY_WORKSPACE_ID"]);
  if (apiKey !== undefined) defaults.apiKey = apiKey;
  if (endpoint !== undefined) defaults.endpoint = endpoint;
  if (workspaceId !== undefined) defaults.workspaceId = workspaceId;
  return defaults;
}

/** A file's text, in Node only (a workload's token file); imported when first needed, so
 * that the browser build never names Node's `fs`. */
export async function readTextFile(path: string): Promise<string> {
  if (nodeEnv() === undefined) {
    throw new Error("Reading a token file needs Node; pass readFile or a tokenProvider instead.");
  }
  const name = "node:fs/promises"; // not a literal: bundlers leave it to Node
  const fs = (await import(name)) as { readFile(path: string, encoding: "utf8"): Promise<string> };
  return fs.readFile(path, "utf8");
}
