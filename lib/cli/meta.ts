/**
 * The facts that make a result file self-describing: tool version and commit, runtime, host,
 * kernel, CPU model, cores, memory, the `--dir` file system (type, mount source, mount point,
 * free space), every resolved option, and each peer library loaded (path and version).
 * @module
 */
import { world } from "../mpi/world.ts";
import { loadedLibraries } from "../peers/common.ts";
import { glibcVersion, readProc, statfs, transparentHugePages } from "../sys/libc.ts";
import { hugePageFacts } from "../baselines/fio.ts";
import { COMMIT, VERSION } from "../core/version.ts";

function readText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The git commit sciobench runs from: the one stamped at build time (release binaries), else
 * read from the checkout around the source (no git process), else "".
 */
export function gitCommit(): string {
  if (COMMIT !== "") return COMMIT;
  const here = import.meta.url;
  if (!here.startsWith("file:")) return "";
  let dir = decodeURIComponent(new URL(".", here).pathname).replace(/\/$/, "");
  for (let i = 0; i < 6 && dir !== ""; i++) {
    const dotGit = `${dir}/.git`;
    let gitDir: string | undefined;
    const asFile = readText(dotGit);
    if (asFile?.startsWith("gitdir: ")) gitDir = asFile.slice(8).trim();
    else if (readText(`${dotGit}/HEAD`) !== undefined) gitDir = dotGit;
    if (gitDir !== undefined) {
      const head = readText(`${gitDir}/HEAD`)?.trim() ?? "";
      if (!head.startsWith("ref: ")) return head;
      const ref = head.slice(5);
      const common = readText(`${gitDir}/commondir`)?.trim();
      const roots = [gitDir, ...(common ? [`${gitDir}/${common}`] : [])];
      for (const root of roots) {
        const direct = readText(`${root}/${ref}`)?.trim();
        if (direct) return direct;
        const packed = readText(`${root}/packed-refs`)?.split("\n").find((l) =>
          l.endsWith(` ${ref}`)
        );
        if (packed) return packed.split(" ")[0]!;
      }
      return "";
    }
    dir = dir.slice(0, dir.lastIndexOf("/"));
  }
  return "";
}

/** The CPU model name from /proc/cpuinfo, or "". */
function cpuModel(): string {
  const info = readProc("/proc/cpuinfo");
  const line = info.split("\n").find((l) => /^(model name|Model|cpu model)\s*:/.test(l));
  return line ? line.slice(line.indexOf(":") + 1).trim() : "";
}

/** The mount holding `path`: its mount point, source and type (from /proc/self/mountinfo). */
export function mountOf(path: string): { point: string; source: string; type: string } {
  let real = path;
  try {
    real = Deno.realPathSync(path);
  } catch {
    // keep the path as given
  }
  let best = { point: "", source: "", type: "" };
  for (const line of readProc("/proc/self/mountinfo").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const point = (left.split(" ")[4] ?? "").replace(/\\040/g, " ");
    const inside = real === point || real.startsWith(point.endsWith("/") ? point : `${point}/`);
    if (inside && point.length >= best.point.length) {
      const [type = "", source = ""] = right.split(" ");
      best = { point, source, type };
    }
  }
  return best;
}

/** The resolved file behind a soname, from this process's memory map ("" when not mapped). */
function mappedPath(soname: string): string {
  if (soname.startsWith("/")) return soname;
  for (const line of readProc("/proc/self/maps").split("\n")) {
    const file = line.slice(line.indexOf("/"));
    if (line.includes("/") && file.slice(file.lastIndexOf("/") + 1).startsWith(soname)) return file;
  }
  return "";
}

/** The loaded peer libraries with resolved paths, for the meta. */
export function librariesMeta(): Record<string, unknown>[] {
  return loadedLibraries().map((l) => ({
    name: l.name,
    path: l.path,
    resolved: l.path.split(":").map(mappedPath).filter((p) => p !== "").join(":"),
    version: l.version,
  }));
}

/** Facts about the file system holding `dir` (default the current directory). */
export function fileSystemMeta(dir: string | undefined): Record<string, unknown> {
  const path = dir ?? ".";
  try {
    const fs = statfs(path);
    const mount = mountOf(path);
    return {
      dir: path,
      type: fs.typeName,
      mount_type: mount.type,
      mount_source: mount.source,
      mount_point: mount.point,
      free_bytes: fs.availableBytes,
    };
  } catch {
    return { dir: path };
  }
}

/**
 * The kernel's huge pages, which `--direct`'s buffers and fio's baseline depend on: the
 * transparent huge page mode (`always`, `madvise` or `never`; "" without THP) and the reserved
 * huge pages free (/proc/meminfo HugePages_Free; 0 when none are reserved).
 */
export function hugePagesMeta(): { transparent_huge_pages: string; huge_pages_free: number } {
  return { transparent_huge_pages: transparentHugePages(), huge_pages_free: hugePageFacts().free };
}

/**
 * Facts about this run for JSON output: the tool, the command with its arguments and every
 * resolved option, the runtime, host, kernel, CPU, memory, huge pages, the `--dir` file system,
 * and the peer libraries loaded so far (call again at the end of a run to include those loaded
 * during it).
 */
export function runMeta(
  command: string,
  args: readonly string[],
  options: Record<string, unknown> = {},
  dir?: string,
): Record<string, unknown> {
  let glibc = "unknown";
  try {
    glibc = glibcVersion();
  } catch {
    // not glibc: the error surfaces where libc is needed
  }
  let memory = 0;
  try {
    memory = Deno.systemMemoryInfo().total;
  } catch {
    // not permitted: left 0
  }
  let kernel = "";
  try {
    kernel = Deno.osRelease();
  } catch {
    // not permitted
  }
  return {
    tool: "sciobench",
    version: VERSION,
    commit: gitCommit(),
    command,
    args,
    options,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    glibc,
    os: `${Deno.build.os}-${Deno.build.arch}`,
    hostname: Deno.hostname(),
    kernel,
    cpu_model: cpuModel(),
    cores: navigator.hardwareConcurrency,
    memory_bytes: memory,
    ...hugePagesMeta(),
    file_system: fileSystemMeta(dir),
    libraries: librariesMeta(),
    date: new Date().toISOString(),
    ...(world().size > 1 ? world().facts() : {}),
  };
}
