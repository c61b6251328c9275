// The page's modules import one another without a cycle: app.ts imports the views, and a
// view depends on the dashboard only through context.ts. Type-only imports count too (a
// cycle of types is still two modules that cannot be read one without the other).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// The tests run from build-test/, beside src/.
const SOURCE = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

/** Every .ts file below `folder`, as paths relative to it. */
function modules(folder: string, below = ""): string[] {
  return readdirSync(join(folder, below), { withFileTypes: true }).flatMap((entry) => {
    const path = join(below, entry.name);
    if (entry.isDirectory()) return modules(folder, path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\.{1,2}\/[^"']+)["']|^\s*import\s+["'](\.{1,2}\/[^"']+)["']/gm;

/** Each module's own imports (relative ones: the packages cannot import the page). */
function importGraph(folder: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of modules(folder)) {
    const text = readFileSync(join(folder, file), "utf8");
    const targets = [...text.matchAll(IMPORT)].map((match) => {
      const spec = (match[1] ?? match[2] ?? "").replace(/\.js$/, ".ts");
      return normalize(join(dirname(file), spec));
    });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The first cycle found, as the modules around it (the first repeated at the end); none: []. */
function firstCycle(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] => {
    const at = path.indexOf(node);
    if (at >= 0) return [...path.slice(at), node];
    if (done.has(node)) return [];
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const found = visit(next);
      if (found.length > 0) return found;
    }
    path.pop();
    done.add(node);
    return [];
  };
  for (const node of [...graph.keys()].sort()) {
    const found = visit(node);
    if (found.length > 0) return found;
  }
  return [];
}

describe("the page's imports", () => {
  it("form no cycle", () => {
    const graph = importGraph(SOURCE);
    assert.ok(graph.has("app.ts") && graph.has(join("views", "keys.ts")), `no modules read in ${relative(process.cwd(), SOURCE)}`);
    assert.deepEqual(firstCycle(graph), []);
  });

  it("are all read, type-only ones included (the views import the context, not the app)", () => {
    const graph = importGraph(SOURCE);
    assert.ok(graph.get("app.ts")?.includes(join("views", "keys.ts")));
    for (const [file, targets] of graph) {
      if (dirname(file) === "views") assert.ok(!targets.includes("app.ts"), `${file} imports app.ts`);
    }
    assert.ok(graph.get(join("views", "keys.ts"))?.includes("context.ts"));
  });

  it("a cycle is found, with the modules around it", () => {
    const graph = new Map([
      ["app.ts", ["dom.ts", join("views", "a.ts")]],
      ["dom.ts", []],
      [join("views", "a.ts"), [join("views", "b.ts")]],
      [join("views", "b.ts"), ["app.ts"]],
    ]);
    assert.deepEqual(firstCycle(graph), ["app.ts", join("views", "a.ts"), join("views", "b.ts"), "app.ts"]);
    assert.deepEqual(firstCycle(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
  });
});
