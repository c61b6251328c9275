// Builds the dashboard into chalicelib/dashboard/static/, where the service serves it from
// (and `chalice package` ships it). esbuild bundles and minifies; file names carry a content
// hash so that they can be cached for good, and index.html names the current ones.
//
//   node build.mjs            the page
//   node build.mjs --tests    the unit tests, into build-test/ (run with node --test)

import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, "src");
const output = join(here, "..", "chalicelib", "dashboard", "static");
const TARGETS = ["es2022", "chrome111", "firefox115", "safari16.4", "edge111"];

// A running service reads these files on every request (`make test` runs the browser tests
// beside other tiers that serve them), so the build is written beside the live folder and put
// in place only when it differs: an unchanged rebuild leaves the served files untouched, and a
// changed one replaces the folder by two renames, never a half-written file.
async function buildPage() {
  removeLeftovers();
  const staging = `${output}.next-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: join(source, "main.ts"), styles: join(source, "styles.css") },
    outdir: staging,
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: TARGETS,
    legalComments: "none",
    charset: "utf8",
    metafile: true,
    // The SDK's workload-identity credential reads a token file in Node (node:fs/promises);
    // the page never uses it, so the import is left out and checked absent below.
    external: ["node:*"],
    logLevel: "warning",
  });
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    const left = meta.imports.filter((entry) => entry.path.startsWith("node:"));
    if (left.length > 0) throw new Error(`${basename(file)} imports ${left.map((e) => e.path).join(", ")}: a browser has none`);
  }
  const names = {};
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    if (meta.entryPoint !== undefined) names[basename(file).split("-")[0]] = basename(file);
  }
  const page = readFileSync(join(source, "index.html"), "utf8").replace(/\{\{(\w+)\}\}/g, (_, name) => {
    if (names[name] === undefined) throw new Error(`index.html names {{${name}}}, which the build did not produce`);
    return names[name];
  });
  writeFileSync(join(staging, "index.html"), page);
  copyFileSync(join(source, "favicon.svg"), join(staging, "favicon.svg"));
  if (sameFiles(staging, output)) {
    rmSync(staging, { recursive: true, force: true });
  } else {
    const old = `${output}.old-${process.pid}`;
    if (existsSync(output)) renameSync(output, old);
    renameSync(staging, output);
    rmSync(old, { recursive: true, force: true });
  }
  report();
}

// A build that was stopped between its folder and the swap leaves `static.next-<pid>` (or
// `.old-<pid>`) behind; `chalice package` would ship it. Another build still running keeps
// its own.
function removeLeftovers() {
  const folder = dirname(output);
  for (const name of readdirSync(folder)) {
    const match = /^static\.(?:next|old)-(\d+)$/.exec(name);
    if (match === null) continue;
    try {
      process.kill(Number(match[1]), 0);
    } catch {
      rmSync(join(folder, name), { recursive: true, force: true });
    }
  }
}

function sameFiles(one, other) {
  if (!existsSync(other)) return false;
  const names = readdirSync(one).sort();
  const others = readdirSync(other).sort();
  if (names.join("\n") !== others.join("\n")) return false;
  return names.every((name) => readFileSync(join(one, name)).equals(readFileSync(join(other, name))));
}

function report() {
  let raw = 0;
  let gzipped = 0;
  const lines = [];
  for (const name of readdirSync(output).sort()) {
    const bytes = readFileSync(join(output, name));
    const zipped = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzipped += zipped;
    lines.push(`  ${name.padEnd(28)} ${(bytes.length / 1024).toFixed(1).padStart(6)} kB  ${(zipped / 1024).toFixed(1).padStart(5)} kB gzip`);
  }
  console.log(`==> dashboard built into chalicelib/dashboard/static/`);
  console.log(lines.join("\n"));
  console.log(`  ${"total".padEnd(28)} ${(raw / 1024).toFixed(1).padStart(6)} kB  ${(gzipped / 1024).toFixed(1).padStart(5)} kB gzip`);
}

async function buildTests() {
  const tests = join(here, "test");
  const target = join(here, "build-test");
  rmSync(target, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: readdirSync(tests).filter((name) => name.endsWith(".test.ts")).map((name) => join(tests, name)),
    outdir: target,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
  });
}

if (process.argv.includes("--tests")) await buildTests();
else await buildPage();
