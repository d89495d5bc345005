/**
 * Seeing the system calls a sciobench run makes: the strace observer (its per-thread files parsed
 * into the calls on files under one directory), and whether this machine's temporary directory
 * takes O_DIRECT at all (the direct I/O tests skip, saying so, only where it cannot).
 * @module
 */
import { probeDirect } from "../lib/io/transfer.ts";
import { UsageError } from "../lib/errors.ts";
import { MAIN, PERMISSIONS } from "./_helpers.ts";

/**
 * One traced call on a file: pread64 or pwrite64 (bytes asked, offset), fsync, fdatasync or
 * ftruncate, with the flags its descriptor was opened with, or openat (its flags), and the
 * thread that made it (`tid`, from strace's per-thread file name).
 */
export interface Traced {
  readonly call: string;
  readonly path: string;
  readonly flags: string;
  readonly count: number;
  readonly offset: number;
  readonly tid: number;
}

/** The calls strace is asked to trace ({@link straceSciobench}). */
export const TRACED_CALLS = "trace=openat,pread64,pwrite64,fadvise64,fsync,fdatasync,ftruncate";

const TRACE_LINE =
  /^(\d+\.\d+) (openat|pread64|pwrite64|fadvise64|fsync|fdatasync|ftruncate)\((.*)\) = (-?\d+)/;

/**
 * The calls on files under `under`, from strace's per-thread files merged in time order (a
 * descriptor opened on one thread may be read on another); with `command` (an index into
 * {@link straceSciobench}'s list), that command's calls only.
 */
export function parseStrace(dir: string, under: string, command?: number): Traced[] {
  const lines: { at: number; tid: number; call: string; args: string; ret: string }[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (command !== undefined && !entry.name.startsWith(`tr${command}.`)) continue;
    const tid = Number(entry.name.slice(entry.name.lastIndexOf(".") + 1));
    for (const line of Deno.readTextFileSync(`${dir}/${entry.name}`).split("\n")) {
      const m = TRACE_LINE.exec(line);
      if (m) lines.push({ at: Number(m[1]), tid, call: m[2]!, args: m[3]!, ret: m[4]! });
    }
  }
  lines.sort((a, b) => a.at - b.at);
  // descriptors are the process's: keyed by number and path (fio's processes have their own)
  const flagsOf = new Map<string, string>();
  const calls: Traced[] = [];
  for (const { tid, call, args, ret } of lines) {
    if (call === "openat") {
      const p = /"([^"]*)", ([A-Z_|]+)/.exec(args);
      if (p && p[1]!.startsWith(under)) {
        flagsOf.set(`${Number(ret)}<${p[1]!}>`, p[2]!);
        calls.push({ call, path: p[1]!, flags: p[2]!, count: 0, offset: 0, tid });
      }
      continue;
    }
    const p = /^(\d+)<([^>]*)>/.exec(args);
    if (!p || !p[2]!.startsWith(under)) continue;
    const rest = args.split(", ");
    const io = call === "pread64" || call === "pwrite64";
    calls.push({
      call,
      path: p[2]!,
      flags: flagsOf.get(`${p[1]!}<${p[2]!}>`) ?? "",
      count: io ? Number(rest.at(-2)) : 0,
      offset: io ? Number(rest.at(-1)) : call === "ftruncate" ? Number(rest.at(-1)) : 0,
      tid,
    });
  }
  return calls;
}

/**
 * Runs each of `commands` (sciobench argument lists) one after another, each under strace, writing
 * the per-thread files of command k into `traceDir` as `trK.TID` (each line time-stamped); returns each command's exit
 * code, stdout and stderr.
 */
export async function straceSciobench(
  commands: readonly string[][],
  traceDir: string,
): Promise<{ code: number; stdout: string; stderr: string }[]> {
  const results: { code: number; stdout: string; stderr: string }[] = [];
  for (const [k, args] of commands.entries()) {
    const out = await new Deno.Command("strace", {
      args: [
        ...["-f", "-ff", "-ttt", "-qq", "-y", "-s", "0", "-o", `${traceDir}/tr${k}`],
        ...["-e", TRACED_CALLS],
        ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, ...args],
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    results.push({
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    });
  }
  return results;
}

/**
 * Why the temporary directory's file system cannot take O_DIRECT (some tmpfs), or null: the
 * direct I/O tests run where it works and are skipped, saying so, only where it cannot.
 */
export const DIRECT_REFUSED: string | null = (() => {
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-probe-" });
  try {
    probeDirect(dir, 65536);
    return null;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.warn(`skipping the O_DIRECT tests: ${e.message}`);
    return e.message;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
})();
