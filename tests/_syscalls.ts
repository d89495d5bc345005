/**
 * Seeing the system calls a sciobench run makes: the strace observer (its per-thread files parsed
 * into the calls on files under one directory), and whether this machine's temporary directory
 * takes O_DIRECT at all (the direct I/O tests skip, saying so, only where it cannot).
 * @module
 */
import { probeDirect } from "../lib/io/transfer.ts";
import { UsageError } from "../lib/core/errors.ts";
import { commandMissing, MAIN, PERMISSIONS, REQUIRE_PEERS } from "./_helpers.ts";

/**
 * One traced call on a file: pread64 or pwrite64 (bytes asked, offset), fsync, fdatasync or
 * ftruncate, with the flags its descriptor was opened with, or openat (its flags), and the
 * thread that made it (`tid`, from strace's per-thread file name). A read through Linux native
 * AIO is two: `io_submit` (one per iocb: bytes asked, offset; `queued` the iocbs of the call) and
 * `io_getevents` (one per completion: `count` its result, `offset` and path those of its read).
 */
export interface Traced {
  readonly call: string;
  readonly path: string;
  readonly flags: string;
  readonly count: number;
  readonly offset: number;
  readonly tid: number;
  /** io_submit: the iocbs the call submitted. */
  readonly queued?: number;
  /** io_submit, io_getevents: the read's aio_data (which completion is whose). */
  readonly id?: string;
  /** io_submit, io_getevents: the address of the read's buffer (aio_buf). */
  readonly buffer?: bigint;
}

/** True for a read system call: pread64, or an AIO read's submission (io_submit). */
export function isRead(c: Traced): boolean {
  return c.call === "pread64" || c.call === "io_submit";
}

/** The calls strace is asked to trace ({@link straceSciobench}). */
export const TRACED_CALLS =
  "trace=openat,pread64,pwrite64,fadvise64,fsync,fdatasync,ftruncate,io_submit,io_getevents";

const TRACE_LINE =
  /^(\d+\.\d+) (openat|pread64|pwrite64|fadvise64|fsync|fdatasync|ftruncate|io_submit|io_getevents)\((.*)\) = (-?\d+)/;
/**
 * An iocb as strace prints it (`-e abbrev=none`), its descriptor decorated with its path (-y); a
 * write's buffer is printed as its (cut) contents, a read's as its address.
 */
const IOCB =
  /\{aio_data=(\w+), aio_lio_opcode=(\w+), aio_fildes=(\d+)<([^>]*)>, aio_buf=(\w+|"[^"]*"(?:\.\.\.)?), aio_nbytes=(\d+), aio_offset=(\d+)/g;
/** An io_event as strace prints it. */
const EVENT = /\{data=(\w+), obj=\w+, res=(-?\d+), res2=-?\d+\}/g;

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
  /** The AIO reads submitted, by aio_data, for their completions. */
  const submitted = new Map<string, Traced>();
  for (const { tid, call, args, ret } of lines) {
    if (call === "io_submit") {
      const queued = Number(args.split(", ")[1]);
      for (const m of args.matchAll(IOCB)) {
        const [, id, op, fd, path, buf, nbytes, offset] = m;
        if (!path!.startsWith(under)) continue;
        const c: Traced = {
          call: op === "IOCB_CMD_PREAD" ? call : `${call} ${op}`,
          path: path!,
          flags: flagsOf.get(`${Number(fd)}<${path!}>`) ?? "",
          count: Number(nbytes),
          offset: Number(offset),
          tid,
          queued,
          id,
          buffer: buf!.startsWith('"') ? undefined : BigInt(buf!),
        };
        submitted.set(id!, c);
        calls.push(c);
      }
      continue;
    }
    if (call === "io_getevents") {
      for (const [, id, res] of args.matchAll(EVENT)) {
        const read = submitted.get(id!);
        if (read === undefined) continue;
        submitted.delete(id!);
        calls.push({ ...read, call, count: Number(res), tid, queued: undefined });
      }
      continue;
    }
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

/** A pread64 or pwrite64 traced with `-e raw=pwrite64,pread64`: its buffer's address too. */
export interface RawIoCall {
  readonly call: "pread64" | "pwrite64";
  readonly path: string;
  /** The flags the descriptor was opened with. */
  readonly flags: string;
  readonly buffer: bigint;
  readonly count: number;
  readonly offset: number;
}

/** `openat(...) = FD</path>` with strace -y, and a raw call `pwrite64(0x16, 0x7f.., 0x400000, 0x0) = 0x..`. */
const RAW_OPEN = /^(\d+\.\d+) openat\(.*?, ([A-Z_|]+)(?:, \w+)?\) = (\d+)<([^>]*)>/;
const RAW_IO =
  /^(\d+\.\d+) (pwrite64|pread64)\((0x[0-9a-f]+|\d+), (0x[0-9a-f]+|0), (0x[0-9a-f]+|0), (0x[0-9a-f]+|0)\) = (0x[0-9a-f]+|\d+)/;
/** `madvise(0x7f.., 4194304, MADV_HUGEPAGE) = 0`. */
const HUGE_ADVICE = /^\d+\.\d+ madvise\((0x[0-9a-f]+), (\d+), MADV_HUGEPAGE\) = 0/;

/** Every line of strace's per-thread files in `traceDir`, in time order. */
function traceLines(traceDir: string): string[] {
  const lines: { at: number; line: string }[] = [];
  for (const entry of Deno.readDirSync(traceDir)) {
    for (const line of Deno.readTextFileSync(`${traceDir}/${entry.name}`).split("\n")) {
      if (line !== "") lines.push({ at: Number(line.slice(0, line.indexOf(" "))), line });
    }
  }
  return lines.sort((a, b) => a.at - b.at).map((l) => l.line);
}

/**
 * The pread64 and pwrite64 calls on files under `under`, in time order, from strace's per-thread
 * files traced with `-e raw=pwrite64,pread64` (buffer addresses; openat decorated by -y).
 */
export function rawIoCalls(traceDir: string, under: string): RawIoCall[] {
  const open = new Map<number, { path: string; flags: string }>();
  const calls: RawIoCall[] = [];
  for (const line of traceLines(traceDir)) {
    const o = RAW_OPEN.exec(line);
    if (o) {
      open.set(Number(o[3]), { path: o[4]!, flags: o[2]! });
      continue;
    }
    const m = RAW_IO.exec(line);
    if (!m) continue;
    const [, , call, fd, buf, count, offset] = m;
    const f = open.get(Number(fd));
    if (f === undefined || !f.path.startsWith(under)) continue;
    calls.push({
      call: call as RawIoCall["call"],
      path: f.path,
      flags: f.flags,
      buffer: BigInt(buf!),
      count: Number(count),
      offset: Number(offset),
    });
  }
  return calls;
}

/** The address ranges [start, end) strace saw advised MADV_HUGEPAGE (trace=madvise), bytes. */
export function hugePageRanges(traceDir: string): [bigint, bigint][] {
  const ranges: [bigint, bigint][] = [];
  for (const line of traceLines(traceDir)) {
    const m = HUGE_ADVICE.exec(line);
    if (m) ranges.push([BigInt(m[1]!), BigInt(m[1]!) + BigInt(m[2]!)]);
  }
  return ranges;
}

/**
 * Runs each of `commands` (sciobench argument lists) one after another, each under strace, writing
 * the per-thread files of command k into `traceDir` as `trK.TID` (each line time-stamped); returns
 * each command's exit code, stdout and stderr. `env` is added to every command's environment;
 * `straceArgs` are more strace options (`-e raw=pwrite64`: buffer addresses, which
 * {@link parseStrace} does not read).
 */
export async function straceSciobench(
  commands: readonly string[][],
  traceDir: string,
  env: Record<string, string> = {},
  straceArgs: readonly string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }[]> {
  const results: { code: number; stdout: string; stderr: string }[] = [];
  for (const [k, args] of commands.entries()) {
    const out = await new Deno.Command("strace", {
      args: [
        ...["-f", "-ff", "-ttt", "-qq", "-y", "-s", "0", "-o", `${traceDir}/tr${k}`],
        // abbrev=none: io_submit's iocbs and io_getevents' events in full
        ...["-e", TRACED_CALLS, "-e", "abbrev=none", ...straceArgs],
        ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, ...args],
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", ...env },
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

/** Why strace cannot run here, or null; a missing strace throws under SCIOBENCH_REQUIRE_PEERS=1. */
export function straceMissing(): string | null {
  const missing = commandMissing("strace");
  if (missing !== null && REQUIRE_PEERS) {
    throw new Error(`strace is required (SCIOBENCH_REQUIRE_PEERS=1): ${missing}`);
  }
  return missing;
}

/**
 * True when the strace tests of direct I/O cannot run here (O_DIRECT refused, or no strace); says
 * so once on stderr, naming `what`.
 */
export function straceDirectSkipped(what: string): boolean {
  const missing = straceMissing();
  const why = DIRECT_REFUSED ?? missing;
  if (why !== null) console.error(`skip: ${what}: ${why}`);
  return why !== null;
}
