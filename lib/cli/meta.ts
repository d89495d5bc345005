/**
 * The facts that make a result file self-describing: tool version and commit, runtime, host,
 * kernel, CPU model, cores, memory, the `--dir` file system (type, mount source, mount point,
 * free space), every resolved option, and each peer library loaded (path and version).
 * @module
 */
import { mpiIoMeta } from "../mpi/io.ts";
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

/** The mount holding a path, from /proc/self/mountinfo. */
export interface MountFacts {
  /** Mount point, source (a device, a server's export) and file system type ("" when unknown). */
  readonly point: string;
  readonly source: string;
  readonly type: string;
  /** The mount's options then its file system's (`rw,relatime,...`), each once; "" when unknown. */
  readonly options: string;
  /** The device number `MAJOR:MINOR` of the file system ("" when unknown). */
  readonly device: string;
}

/** The mount holding `path`: its mount point, source, type, options and device number. */
export function mountOf(path: string): MountFacts {
  let real = path;
  try {
    real = Deno.realPathSync(path);
  } catch {
    // keep the path as given
  }
  let best: MountFacts = { point: "", source: "", type: "", options: "", device: "" };
  for (const line of readProc("/proc/self/mountinfo").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const point = (fields[4] ?? "").replace(/\\040/g, " ");
    const inside = real === point || real.startsWith(point.endsWith("/") ? point : `${point}/`);
    if (inside && point.length >= best.point.length) {
      const [type = "", source = "", superOptions = ""] = right.split(" ");
      const options = [...new Set([...(fields[5] ?? "").split(","), ...superOptions.split(",")])]
        .filter((o) => o !== "").join(",");
      best = { point, source, type, options, device: fields[2] ?? "" };
    }
  }
  return best;
}

/**
 * The block device behind device number `majorMinor` (/sys/dev/block; a partition's disk): its
 * name, model, I/O scheduler (the one in use), and the read-ahead of the file system's backing
 * device (/sys/class/bdi, which NFS mounts have too) in KiB. Each fact absent here (a container's
 * overlay, tmpfs, a virtual disk without a model) is null.
 */
export function deviceMeta(majorMinor: string): {
  device_name: string | null;
  device_model: string | null;
  io_scheduler: string | null;
  read_ahead_kb: number | null;
} {
  const text = (path: string) => readText(path)?.trim() || null;
  if (!/^\d+:\d+$/.test(majorMinor)) {
    return { device_name: null, device_model: null, io_scheduler: null, read_ahead_kb: null };
  }
  const readAhead = text(`/sys/class/bdi/${majorMinor}/read_ahead_kb`);
  let disk: string | null = null;
  try {
    disk = Deno.realPathSync(`/sys/dev/block/${majorMinor}`);
    if (readText(`${disk}/partition`) !== undefined) disk = disk.slice(0, disk.lastIndexOf("/"));
  } catch {
    // not a block device (tmpfs, overlay, NFS): no disk facts
  }
  const scheduler = disk === null ? null : text(`${disk}/queue/scheduler`);
  return {
    device_name: disk === null ? null : disk.slice(disk.lastIndexOf("/") + 1),
    device_model: disk === null ? null : text(`${disk}/device/model`),
    // "none [mq-deadline] kyber": the bracketed one is in use
    io_scheduler: scheduler === null ? null : /\[([^\]]+)\]/.exec(scheduler)?.[1] ?? scheduler,
    read_ahead_kb: readAhead === null || !/^\d+$/.test(readAhead) ? null : Number(readAhead),
  };
}

/** The 1, 5 and 15 minute load averages (/proc/loadavg), or null where there is none. */
export function loadAverage(): [number, number, number] | null {
  const fields = readText("/proc/loadavg")?.split(" ").slice(0, 3).map(Number) ?? [];
  return fields.length === 3 && fields.every(Number.isFinite)
    ? [fields[0]!, fields[1]!, fields[2]!]
    : null;
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

/**
 * Facts about the file system holding `dir` (default the current directory): the directory as
 * given and absolute, its type, mount (type, source, point, options), free space, and its device
 * ({@link deviceMeta}); a fact not found is null.
 */
export function fileSystemMeta(dir: string | undefined): Record<string, unknown> {
  const path = dir ?? ".";
  let absolute: string | null = null;
  try {
    absolute = Deno.realPathSync(path);
  } catch {
    // gone or not permitted: left null
  }
  try {
    const fs = statfs(path);
    const mount = mountOf(path);
    return {
      dir: path,
      absolute_dir: absolute,
      type: fs.typeName,
      mount_type: mount.type,
      mount_source: mount.source,
      mount_point: mount.point,
      mount_options: mount.options || null,
      free_bytes: fs.availableBytes,
      ...deviceMeta(mount.device),
    };
  } catch {
    return { dir: path, absolute_dir: absolute };
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
 * resolved option, the runtime, host, kernel, CPU, memory, huge pages, the `--dir` file system
 * and its device, the load average at the start, and the peer libraries loaded so far (call
 * {@link endMeta} at the end of a run for those loaded during it, the load and the duration).
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
    load_average_start: loadAverage(),
    // filled in when the run ends (null in JSON lines, whose facts come first)
    load_average_end: null,
    duration_s: null,
    ...(world().size > 1 ? world().facts() : {}),
  };
}

/**
 * Completes `meta` (from {@link runMeta}) at the end of a run: the peer libraries loaded during
 * it, under MPI the hints each kind of MPI-IO open ran with (`mpi_io`, lib/mpi/io.ts, as rank 0
 * saw them), the load average at the end, and the run's duration in seconds since `startMs`
 * (performance.now() when the meta was made).
 */
export function endMeta(meta: Record<string, unknown>, startMs: number): void {
  meta.libraries = librariesMeta();
  const mpiIo = mpiIoMeta();
  if (mpiIo !== null) meta.mpi_io = mpiIo;
  meta.load_average_end = loadAverage();
  meta.duration_s = (performance.now() - startMs) / 1000;
}
