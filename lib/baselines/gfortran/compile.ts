/**
 * gfortran as a program peer: the seeds' Fortran programs (sources.ts) compiled once with
 * `gfortran -O2` into a cache directory keyed by the compiler's version and the source's hash
 * ($XDG_CACHE_HOME/sciobench/gfortran, else ~/.cache/sciobench/gfortran; $SCIOBENCH_CACHE
 * overrides the base), then run as separate processes. `$SCIOBENCH_GFORTRAN` names the compiler.
 * @module
 */
import { createHash } from "node:crypto";
import { IoError, PeerUnavailableError } from "../../core/errors.ts";
import { IOSPEED_F77, PACKMAN_RD, PACKMAN_WR } from "./programs.ts";

/** The programs sciobench carries, by name. */
export const FORTRAN_PROGRAMS = { rd: PACKMAN_RD, wr: PACKMAN_WR, iospeed: IOSPEED_F77 } as const;

/** Name of one carried program. */
export type FortranProgram = keyof typeof FORTRAN_PROGRAMS;

function compiler(): string {
  return Deno.env.get("SCIOBENCH_GFORTRAN") ?? "gfortran";
}

let version: string | null | undefined;

/** gfortran's `--version` first line, or null when it does not run here (checked once). */
export function gfortranVersion(): string | null {
  if (version !== undefined) return version;
  try {
    const out = new Deno.Command(compiler(), {
      args: ["--version"],
      stdout: "piped",
      stderr: "null",
    })
      .outputSync();
    version = out.success ? new TextDecoder().decode(out.stdout).split("\n")[0]!.trim() : null;
  } catch {
    version = null;
  }
  return version;
}

/** null when gfortran can build the programs here, else why not. */
export function gfortranUnavailable(): string | null {
  return gfortranVersion() === null
    ? `${compiler()} is not installed (apt-get install gfortran, or set SCIOBENCH_GFORTRAN)`
    : null;
}

/** The cache directory of compiled programs. */
export function fortranCacheDir(): string {
  const base = Deno.env.get("SCIOBENCH_CACHE") ??
    (Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`) + "/sciobench";
  return `${base}/gfortran`;
}

/**
 * Path of program `name` compiled by this gfortran, building it when the cache does not hold it
 * yet (into a temporary name, then renamed: concurrent builds are safe).
 */
export function fortranProgram(name: FortranProgram): string {
  const v = gfortranVersion();
  if (v === null) throw new PeerUnavailableError(`gfortran: ${gfortranUnavailable()}`);
  const source = FORTRAN_PROGRAMS[name];
  const key = createHash("sha256").update(`${v}\n-O2\n${source}`).digest("hex").slice(0, 16);
  const dir = `${fortranCacheDir()}/${key}`;
  const exe = `${dir}/${name}`;
  try {
    if (Deno.statSync(exe).isFile) return exe;
  } catch {
    // not built yet
  }
  Deno.mkdirSync(dir, { recursive: true });
  const work = Deno.makeTempDirSync({ dir, prefix: `.build-${name}-` });
  try {
    Deno.writeTextFileSync(`${work}/${name}.f90`, source);
    const out = new Deno.Command(compiler(), {
      args: ["-O2", "-o", `${work}/${name}`, `${work}/${name}.f90`],
      cwd: work,
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!out.success) {
      const why = new TextDecoder().decode(out.stderr).trim().split("\n").slice(0, 3).join(" ");
      throw new IoError(`gfortran could not compile ${name}: ${why}`);
    }
    Deno.renameSync(`${work}/${name}`, exe);
  } finally {
    Deno.removeSync(work, { recursive: true });
  }
  return exe;
}
