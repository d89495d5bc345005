/**
 * What differs between runs' facts (the JSON `meta`): the sciobench version and commit, host,
 * kernel, runtime, CPU, memory, file system, the libraries loaded and the options given, each as
 * one line with every run's value, so a comparison says up front what else changed.
 * @module
 */

/** One fact that differs between runs, with its value in each (in the order given). */
export interface MetaDifference {
  /** Dotted name of the fact (`file_system.type`, `libraries.hdf5`). */
  readonly field: string;
  /** Its value in each run, as text ("" when the run did not record it). */
  readonly values: readonly string[];
}

/** The facts compared, as dotted paths into `meta`. */
const FACTS = [
  "version",
  "commit",
  "hostname",
  "kernel",
  "os",
  "deno",
  "v8",
  "glibc",
  "cpu_model",
  "cores",
  "memory_bytes",
  "transparent_huge_pages",
  "file_system.type",
  "file_system.mount_source",
  "file_system.mount_point",
  "file_system.dir",
] as const;

function at(meta: Readonly<Record<string, unknown>>, path: string): unknown {
  let v: unknown = meta;
  for (const part of path.split(".")) {
    v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  }
  return v;
}

function text(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** The loaded libraries of a meta, by name: version text. */
function libraries(meta: Readonly<Record<string, unknown>>): Map<string, string> {
  const out = new Map<string, string>();
  const list = Array.isArray(meta.libraries) ? meta.libraries : [];
  for (const lib of list) {
    if (typeof lib !== "object" || lib === null) continue;
    const l = lib as Record<string, unknown>;
    out.set(text(l.name ?? l.library), text(l.version ?? l.path));
  }
  return out;
}

/**
 * Every fact, library and option whose value is not the same in all `metas` (runs without a
 * meta, such as CSV files, are left out: they record none).
 */
export function metaDifferences(
  metas: readonly Readonly<Record<string, unknown>>[],
): MetaDifference[] {
  const recorded = metas.filter((m) => Object.keys(m).length > 0);
  if (recorded.length < 2) return [];
  const out: MetaDifference[] = [];
  const push = (field: string, values: string[]) => {
    if (new Set(values).size > 1) out.push({ field, values });
  };
  for (const fact of FACTS) push(fact, recorded.map((m) => text(at(m, fact))));
  const libs = recorded.map(libraries);
  const names = [...new Set(libs.flatMap((l) => [...l.keys()]))].sort();
  for (const name of names) push(`libraries.${name}`, libs.map((l) => l.get(name) ?? ""));
  const options = recorded.map((m) => (at(m, "options") ?? {}) as Record<string, unknown>);
  const keys = [...new Set(options.flatMap((o) => Object.keys(o)))];
  for (const key of keys) push(`options.${key}`, options.map((o) => text(o[key])));
  return out;
}
