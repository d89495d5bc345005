/**
 * Which MPI library a parallel I/O library (PnetCDF, netCDF-4 parallel) was built for, read from
 * its ELF file before it is loaded: its DT_NEEDED entries name Open MPI's `libmpi.so.40` or
 * MPICH's `libmpich.so.12`. Loading a library built for the other MPI than the launcher's would
 * bind its MPI calls to the wrong library (their handles differ: addresses in Open MPI, integers
 * in MPICH), so the peers check first and refuse in one line.
 * @module
 */
import { envValue, pathExists } from "./common.ts";

/** The MPI ABI families (as lib/backends/backend.ts's MpiHandles names them). */
export type LinkedMpi = "openmpi" | "mpich";

/** Directories a soname is looked up in (after LD_LIBRARY_PATH), Debian's first. */
const LIBRARY_DIRS = [
  "/usr/lib/x86_64-linux-gnu",
  "/lib/x86_64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
  "/usr/lib64",
  "/usr/lib",
  "/usr/local/lib",
];

/** The file `name` (a path, or a soname looked up as the loader would) is, or undefined. */
export function libraryFile(name: string): string | undefined {
  if (name.includes("/")) return pathExists(name) ? name : undefined;
  const dirs = [...(envValue("LD_LIBRARY_PATH")?.split(":") ?? []), ...LIBRARY_DIRS];
  for (const dir of dirs) {
    if (dir !== "" && pathExists(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return undefined;
}

/**
 * The DT_NEEDED entries of the 64-bit little-endian ELF file at `path` (from its section
 * headers: the SHT_DYNAMIC section and the string table it links), or [] when it is not one.
 */
export function neededLibraries(path: string): string[] {
  const bytes = Deno.readFileSync(path);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const elf = bytes.length > 64 && v.getUint32(0) === 0x7f454c46;
  if (!elf || bytes[4] !== 2 || bytes[5] !== 1) return [];
  const shoff = Number(v.getBigUint64(0x28, true));
  const shentsize = v.getUint16(0x3a, true);
  const shnum = v.getUint16(0x3c, true);
  const section = (i: number) => {
    const at = shoff + i * shentsize;
    return {
      type: v.getUint32(at + 4, true),
      offset: Number(v.getBigUint64(at + 0x18, true)),
      size: Number(v.getBigUint64(at + 0x20, true)),
      link: v.getUint32(at + 0x28, true),
    };
  };
  const out: string[] = [];
  for (let i = 0; i < shnum && shoff + (i + 1) * shentsize <= bytes.length; i++) {
    const s = section(i);
    if (s.type !== 6) continue; // SHT_DYNAMIC
    const strings = section(s.link);
    for (let at = s.offset; at + 16 <= s.offset + s.size; at += 16) {
      const tag = v.getBigInt64(at, true);
      if (tag === 0n) break;
      if (tag !== 1n) continue; // DT_NEEDED
      const start = strings.offset + Number(v.getBigUint64(at + 8, true));
      const end = bytes.indexOf(0, start);
      out.push(new TextDecoder().decode(bytes.subarray(start, end < 0 ? start : end)));
    }
  }
  return out;
}

/** What {@link linkedMpi} found, by path (each file is read once). */
const LINKED = new Map<string, LinkedMpi | undefined>();

/** The MPI the library file at `path` links (by its DT_NEEDED entries), or undefined: none. */
export function linkedMpi(path: string): LinkedMpi | undefined {
  if (LINKED.has(path)) return LINKED.get(path);
  const needed = neededLibraries(path);
  const linked = needed.some((n) => /^libmpi\.so\.40\b/.test(n))
    ? "openmpi"
    : needed.some((n) => /^libmpich|^libmpi\.so\.12\b/.test(n))
    ? "mpich"
    : undefined;
  LINKED.set(path, linked);
  return linked;
}

/** The names of the two MPI families as users know them. */
export const MPI_NAMES: Readonly<Record<LinkedMpi, string>> = {
  openmpi: "Open MPI",
  mpich: "MPICH",
};

/**
 * The library file a loader of an MPI-built library would load: `env`'s path when set, else the
 * first of `sonames` found.
 */
export function mpiLibraryCandidate(env: string, sonames: readonly string[]): string | undefined {
  const given = Deno.env.get(env);
  if (given !== undefined && given !== "") return given;
  for (const name of sonames) {
    const file = libraryFile(name);
    if (file !== undefined) return file;
  }
  return undefined;
}

/**
 * Why the library `file` cannot run with an MPI of `abi`: built for the other MPI (read from the
 * file, without loading it), said with the `env` variable to set to `another` (`a PnetCDF`)
 * built for `abi`; null when it looks usable.
 */
export function mpiMismatch(
  file: string,
  abi: LinkedMpi | undefined,
  env: string,
  another: string,
): string | null {
  const linked = linkedMpi(libraryFile(file) ?? file);
  if (abi !== undefined && linked !== undefined && linked !== abi) {
    return `${file} is built for ${MPI_NAMES[linked]} and this run's MPI is ${MPI_NAMES[abi]}: ` +
      `run it under ${MPI_NAMES[linked]}'s launcher, or set ${env} to ${another} built for ` +
      MPI_NAMES[abi];
  }
  return null;
}

/**
 * The library for an MPI of `abi` from `state` (loaded once per MPI for the process), else
 * `problem`'s reason, else what `load` returns (the library, or why it did not load), kept.
 */
export function loadOncePerMpi<T>(
  state: Map<LinkedMpi, T | string>,
  abi: LinkedMpi,
  problem: (abi: LinkedMpi) => string | null,
  load: () => T | string,
): T | string {
  const known = state.get(abi);
  if (known !== undefined) return known;
  const result = problem(abi) ?? load();
  state.set(abi, result);
  return result;
}
