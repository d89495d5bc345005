/**
 * The layout of lib/ is the pipeline: cli -> workloads -> backends -> (framings | peers) -> io ->
 * sys (-> bytes), with mpi/ and report/ beside (mpi/ between workloads and backends: its
 * shared-file layout writes through the native sink) and lib/core/ (errors, diagnostics, sizes,
 * suggest, version) under all. No import points back up; io, sys and bytes import nothing but
 * core and the layers below them; no module imports itself through others (no cycle, type-only
 * imports included). Two upward imports are allowed, both type-only (erased at run time): peers
 * implement the Backend contract that lib/backends/backend.ts declares, as the framings implement
 * theirs one layer down; and a workload's plan takes the values of the flags lib/cli/flags.ts
 * declares for it (`FlagValues<"table">`), the one table of flags.
 *
 * lib/baselines/ holds the programs sciobench measures beside its own pipeline to compare with
 * (fio, the gfortran-compiled programs): not backends, so the registry never lists them. They sit
 * under peers and over io: a baseline runs on io, sys and core (and names the contract's types,
 * type-only, as a peer does); the commands and workloads that compare with one import it, and so
 * does a peer that runs a program a baseline builds (f77-gfortran); backends and framings never do.
 */
import assert from "node:assert/strict";

const LIB = new URL("../lib/", import.meta.url).pathname;

/** Position in the pipeline (smaller is higher); beside layers and root files have none. */
const RANK: Readonly<Record<string, number>> = {
  cli: 0,
  workloads: 1,
  backends: 2,
  framings: 3,
  peers: 3,
  baselines: 4,
  io: 5,
  sys: 6,
  bytes: 7,
  core: 8,
};
/** The layers that may import a baseline (beside itself). */
const BASELINE_USERS = ["cli", "workloads", "peers", "baselines"];
const BESIDE = ["mpi", "report"];
const CONTRACT = "backends/backend.ts";
/** The flag table, whose value types the workloads' plans take. */
const FLAG_TABLE = "cli/flags.ts";

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly typeOnly: boolean;
}

/** Every relative import and re-export of every file under lib/ (paths relative to lib/). */
function edges(): Edge[] {
  const out: Edge[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.name.endsWith(".ts")) {
        const from = path.slice(LIB.length).replace(/^\/+/, "");
        const text = Deno.readTextFileSync(path);
        const re = /^(import|export)\s+(type\s+)?[^;]*?\sfrom\s+"(\.[^"]+)"/gms;
        for (const m of text.matchAll(re)) {
          const target = new URL(m[3]!, `file:///lib/${from}`).pathname;
          const to = target.startsWith("/lib/") ? target.slice("/lib/".length) : `..${target}`;
          out.push({ from, to, typeOnly: m[2] !== undefined });
        }
      }
    }
  };
  walk(LIB.replace(/\/$/, ""));
  return out;
}

function layer(path: string): string {
  return path.includes("/") ? path.slice(0, path.indexOf("/")) : "";
}

Deno.test("layers: no import in lib/ points back up the pipeline", () => {
  const all = edges();
  assert.ok(all.length > 100, "the scan sees the imports");
  const upward = all.filter(({ from, to, typeOnly }) => {
    const a = layer(from), b = layer(to);
    if (to.startsWith("../")) return true; // outside lib/ (deno.json is read by version.ts only)
    if (a === "" || b === "") return true; // every module lives in a layer's folder
    if (b === "core") return false; // core is under every layer
    // mpi/ writes the shared-file layout through the native sink: it may use backends/
    if (BESIDE.includes(a)) {
      return RANK[b] !== undefined && RANK[b]! < (a === "mpi" ? RANK.backends! : RANK.framings!);
    }
    if (BESIDE.includes(b)) return a !== "" && RANK[a]! > RANK.workloads! && b === "mpi";
    if (a === "" || RANK[a] === undefined || RANK[b] === undefined) return false;
    if (RANK[b]! >= RANK[a]!) return false;
    if (typeOnly && to === FLAG_TABLE && a === "workloads") return false;
    return !(typeOnly && to === CONTRACT && (a === "peers" || a === "baselines"));
  }).filter((e) => !(e.from === "core/version.ts" && e.to === "../deno.json"));
  assert.deepEqual(upward.map((e) => `${e.from} -> ${e.to}`), []);
  // The check sees the kinds of import it allows and refuses.
  assert.ok(all.some((e) => e.from.startsWith("peers/") && e.to === CONTRACT && e.typeOnly));
  assert.ok(all.some((e) => e.from === "backends/registry.ts" && e.to === "peers/mod.ts"));
  assert.ok(all.some((e) => e.from.startsWith("workloads/") && e.to === FLAG_TABLE && e.typeOnly));
  assert.ok(
    !all.some((e) => e.from.startsWith("workloads/") && e.to === FLAG_TABLE && !e.typeOnly),
  );
});

Deno.test("layers: only commands, workloads and peers import a baseline", () => {
  const all = edges();
  const users = (e: Edge) => layer(e.to) === "baselines" && !BASELINE_USERS.includes(layer(e.from));
  assert.deepEqual(all.filter(users).map((e) => `${e.from} -> ${e.to}`), []);
  // The check sees the imports it allows, and would see a backend importing a baseline.
  assert.ok(all.some((e) => e.from === "workloads/table/fio.ts" && e.to === "baselines/fio.ts"));
  assert.ok(users({ from: "backends/registry.ts", to: "baselines/fio.ts", typeOnly: false }));
});

Deno.test("layers: io, sys, bytes and core import nothing above them", () => {
  const low = ["io", "sys", "bytes", "core"];
  const bad = edges().filter(({ from, to }) => {
    const a = layer(from), b = layer(to);
    if (!low.includes(a) || to === "../deno.json") return false;
    return !low.includes(b) || RANK[b]! < RANK[a]!;
  });
  assert.deepEqual(bad.map((e) => `${e.from} -> ${e.to}`), []);
});

/** The import cycles among `edges`, each as the modules around it (first module repeated last). */
function cycles(all: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of all) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (m: string) => {
    state.set(m, "open");
    stack.push(m);
    for (const n of next.get(m) ?? []) {
      if (state.get(n) === "open") found.push([...stack.slice(stack.indexOf(n)), n]);
      else if (!state.has(n)) visit(n);
    }
    stack.pop();
    state.set(m, "done");
  };
  for (const m of [...next.keys()].sort()) if (!state.has(m)) visit(m);
  return found;
}

Deno.test("layers: no import cycle in lib/, type-only imports included", () => {
  assert.deepEqual(cycles(edges()).map((c) => c.join(" -> ")), []);
  // The search finds a cycle where there is one.
  const made: Edge[] = [
    { from: "a/x.ts", to: "b/y.ts", typeOnly: false },
    { from: "b/y.ts", to: "a/x.ts", typeOnly: true },
  ];
  assert.deepEqual(cycles(made), [["a/x.ts", "b/y.ts", "a/x.ts"]]);
});
