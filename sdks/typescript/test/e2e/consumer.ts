// The package as a consumer gets it: `npm pack`, installed from the tarball into a fresh
// project outside this folder, type-checked for Node and for a browser, and run in Node.
// Everything resolves through package.json `exports`; nothing here reaches into src/.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { MemoryClient, type ApiKeyWithSecret } from "../../src/index.js";
import type { StackInfo } from "../stack.js";

const run = promisify(execFile);
const COMMAND_TIMEOUT_MS = 120_000;
// build-test/test/e2e/consumer.js -> the package folder, and the fixtures in its source tree.
const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const FIXTURES = join(PACKAGE_DIR, "test", "fixtures", "consumer");
const TSC = join(PACKAGE_DIR, "node_modules", "typescript", "bin", "tsc");

interface PackResult {
  filename: string;
  files: { path: string }[];
}

interface ConsumerOutput {
  resolved: string;
  endpoint: string;
  workspaceId: string;
  me: { keyId: string; credential: string; workspaceId: string };
  errorsAreClasses: boolean;
  deepImport: string;
}

async function typecheck(folder: string, config: string): Promise<void> {
  try {
    await run(process.execPath, [TSC, "-p", join(folder, config)], { cwd: folder, timeout: COMMAND_TIMEOUT_MS });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    assert.fail(`tsc -p ${config} failed:\n${stdout}${stderr}`);
  }
}

export function consumerSuite(stack: () => StackInfo): void {
  describe("the packed package, installed and imported as a consumer would", () => {
    let folder: string;
    let packed: PackResult;
    let adminKey: ApiKeyWithSecret;

    before(async () => {
      folder = mkdtempSync(join(tmpdir(), "memory-sdk-consumer-"));
      // dist/ was just built by `make test`; scripts are skipped so pack does not build again.
      const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", folder], {
        cwd: PACKAGE_DIR,
        timeout: COMMAND_TIMEOUT_MS,
      });
      packed = (JSON.parse(stdout) as PackResult[])[0] as PackResult;
      const project = join(folder, "project");
      cpSync(FIXTURES, project, { recursive: true });
      await run(
        "npm",
        ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", join(folder, packed.filename)],
        { cwd: project, timeout: COMMAND_TIMEOUT_MS },
      );
      const strict = { target: "ES2022", strict: true, skipLibCheck: false };
      writeFileSync(
        join(project, "tsconfig.node.json"),
        JSON.stringify({
          compilerOptions: {
            ...strict,
            module: "NodeNext",
            moduleResolution: "NodeNext",
            lib: ["ES2022"],
            types: ["node"],
            typeRoots: [join(PACKAGE_DIR, "node_modules", "@types")],
            outDir: "out",
          },
          files: ["node.ts"],
        }),
      );
      writeFileSync(
        join(project, "tsconfig.browser.json"),
        JSON.stringify({
          compilerOptions: {
            ...strict,
            module: "ESNext",
            moduleResolution: "Bundler",
            lib: ["ES2022", "DOM"],
            types: [],
            noEmit: true,
          },
          files: ["browser.ts"],
        }),
      );
      const user = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => stack().token });
      adminKey = await user.auth.createApiKey({ label: "e2e consumer" });
    });

    after(() => {
      rmSync(folder, { recursive: true, force: true });
    });

    it("ships the build and its declarations, not the tests", () => {
      const paths = packed.files.map((file) => file.path);

      assert.ok(paths.includes("dist/index.js"));
      assert.ok(paths.includes("dist/index.d.ts"));
      assert.ok(paths.includes("package.json"));
      assert.ok(paths.includes("README.md"));
      assert.ok(!paths.some((path) => path.startsWith("test/") || path.startsWith("build-test/")));
    });

    it("type-checks in a browser project (bundler resolution, DOM types, no Node types)", async () => {
      await typecheck(join(folder, "project"), "tsconfig.browser.json");
    });

    it("type-checks in a Node project and runs from its exports, configured by MEMORY_* alone", async () => {
      // NodeNext resolution, Node's types and no DOM; the compiled file is then run.
      const project = realpathSync(join(folder, "project"));
      await typecheck(project, "tsconfig.node.json");
      assert.deepEqual(readdirSync(join(project, "out")), ["node.js"]);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env["PATH"],
        MEMORY_ENDPOINT: stack().endpoint,
        MEMORY_API_KEY: adminKey.key,
        MEMORY_WORKSPACE_ID: stack().workspaceId,
      };

      const { stdout } = await run(process.execPath, [join(project, "out", "node.js")], {
        cwd: project,
        env,
        timeout: COMMAND_TIMEOUT_MS,
      });

      const output = JSON.parse(stdout) as ConsumerOutput;
      assert.equal(fileURLToPath(output.resolved), join(project, "node_modules", "memory-sdk", "dist", "index.js"));
      assert.equal(output.endpoint, stack().endpoint);
      assert.equal(output.workspaceId, stack().workspaceId);
      assert.equal(output.me.credential, "api_key");
      assert.equal(output.me.keyId, adminKey.id);
      assert.equal(output.me.workspaceId, stack().workspaceId);
      assert.equal(output.errorsAreClasses, true);
      assert.equal(output.deepImport, "ERR_PACKAGE_PATH_NOT_EXPORTED");
    });

    it("runs the README's first example as written, in a fresh `npm init -y` project", async () => {
      const project = join(folder, "fresh");
      mkdirSync(project);
      await run("npm", ["init", "-y"], { cwd: project, timeout: COMMAND_TIMEOUT_MS });
      await run(
        "npm",
        ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", join(folder, packed.filename)],
        { cwd: project, timeout: COMMAND_TIMEOUT_MS },
      );
      const { name, source } = firstExample(readFileSync(join(PACKAGE_DIR, "README.md"), "utf8"));
      writeFileSync(join(project, name), source);

      const { stdout } = await run(process.execPath, [name], {
        cwd: project,
        env: { PATH: process.env["PATH"], MEMORY_ENDPOINT: stack().endpoint, MEMORY_API_KEY: adminKey.key },
        timeout: COMMAND_TIMEOUT_MS,
      });

      assert.equal(stdout.trim(), `signed in as ${stack().userId} with api_key ${adminKey.id}`);
    });
  });
}

/** The README's first JavaScript example: its file name (its first comment) and its text. */
function firstExample(readme: string): { name: string; source: string } {
  const block = /```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(block?.[1], "the README has a js example");
  const source = block[1];
  const name = /^\/\/ (\S+\.m?js)\n/.exec(source)?.[1];
  assert.ok(name, "the example's first line names its file");
  return { name, source };
}
