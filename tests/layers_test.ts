/**
 * The layout of lib/ is the pipeline: cli -> workloads -> backends -> (framings | peers) -> io ->
 * sys (-> bytes), with mpi/ and report/ beside and the root files (errors, version, suggest)
 * shared by all. No import points back up. The one allowed exception is type-only: peers
 * implement the Backend contract that lib/backends/backend.ts declares (`import type`, erased at
 * run time), as the framings implement theirs one layer down.
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
  io: 4,
  sys: 5,
  bytes: 6,
};
const BESIDE = ["mpi", "report"];
const CONTRACT = "backends/backend.ts";

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
          const to = new URL(m[3]!, `file:///lib/${from}`).pathname.slice("/lib/".length);
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
    if (b === "") return false; // root files: errors, version, suggest
    if (BESIDE.includes(a)) return RANK[b] !== undefined && RANK[b]! < RANK.framings!;
    if (BESIDE.includes(b)) return a !== "" && RANK[a]! > RANK.workloads! && b === "mpi";
    if (a === "" || RANK[a] === undefined || RANK[b] === undefined) return false;
    if (RANK[b]! >= RANK[a]!) return false;
    return !(typeOnly && to === CONTRACT && a === "peers");
  }).filter((e) => !(e.from === "version.ts" && e.to === "../deno.json"));
  assert.deepEqual(upward.map((e) => `${e.from} -> ${e.to}`), []);
  // The check sees the kinds of import it allows and refuses.
  assert.ok(all.some((e) => e.from.startsWith("peers/") && e.to === CONTRACT && e.typeOnly));
  assert.ok(all.some((e) => e.from === "backends/registry.ts" && e.to === "peers/mod.ts"));
});
