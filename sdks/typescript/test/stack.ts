// The local stack (`python -m local.stack`) as a child process, one for the whole e2e run:
// the same command, arguments and ready file as the repository's Python suites use
// (local/running.py). The Makefile passes the repository's virtualenv python as
// MEMORY_STACK_PYTHON.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export interface StackInfo {
  endpoint: string;
  port: number;
  motoEndpoint: string;
  motoPort: number;
  userId: string;
  workspaceId: string;
  /** An RS256 user token for the development user, valid one hour. */
  token: string;
  pid: number;
  /** The development identity provider (issue 3): POST {idpEndpoint}/token. */
  idpEndpoint?: string;
}

export interface RunningStack {
  info: StackInfo;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 90_000; // as local/running.py waits
const STOP_TIMEOUT_MS = 10_000;
// build-test/test/stack.js -> the repository root, four levels up.
const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = process.env["MEMORY_REPO_ROOT"] ?? resolve(HERE, "../../../..");

function pythonPath(): string {
  const python = process.env["MEMORY_STACK_PYTHON"] ?? join(REPO_ROOT, ".venv", "bin", "python");
  if (!existsSync(python)) {
    throw new Error(`No python at ${python}: run 'make venv' at the repository root, or set MEMORY_STACK_PYTHON.`);
  }
  return python;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once("exit", () => done());
  });
}

export async function startStack(): Promise<RunningStack> {
  const folder = mkdtempSync(join(tmpdir(), "memory-sdk-stack-"));
  const readyFile = join(folder, "ready.json");
  const child = spawn(pythonPath(), ["-m", "local.stack", "--port", "0", "--quiet", "--ready-file", readyFile], {
    cwd: REPO_ROOT,
    // Its banner prints the development token: keep stdout out of the test output.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // A test run that dies without its after-hook must not leave the stack (and moto) behind.
  const killOnExit = (): void => {
    child.kill("SIGTERM");
  };
  process.once("exit", killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener("exit", killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited(child);
      clearTimeout(timer);
    }
    rmSync(folder, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`The local stack exited (${child.exitCode}) before it was ready:\n${stderr}`);
    }
    // The stack renames the ready file into place once written (local/running.py): whoever
    // sees it sees all of it.
    if (existsSync(readyFile)) {
      return { info: JSON.parse(readFileSync(readyFile, "utf8")) as StackInfo, stop };
    }
    await sleep(100);
  }
  await stop();
  throw new Error(`The local stack was not ready within ${READY_TIMEOUT_MS / 1000} s:\n${stderr}`);
}

/** An ID token for `sub` from the stack's development identity provider. */
export async function idToken(info: StackInfo, sub: string, email = `${sub}@example.com`): Promise<string> {
  if (info.idpEndpoint === undefined) {
    throw new Error("The stack's ready file names no idpEndpoint: the login exchange (issue 3) is not there yet.");
  }
  const response = await fetch(`${info.idpEndpoint.replace(/\/+$/, "")}/token`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ sub, email }),
  });
  if (response.status !== 200) throw new Error(`The development IdP answered ${response.status}.`);
  const body = (await response.json()) as { id_token?: unknown };
  if (typeof body.id_token !== "string") throw new Error("The development IdP sent no id_token.");
  return body.id_token;
}
