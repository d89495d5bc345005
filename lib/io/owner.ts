/**
 * Who owns a piece of scratch (a scratch directory, a temporary file): process id, host name and
 * the process's start time, so a later run on the same host can tell a dead owner from a live
 * one (and from a new process that reuses the pid).
 * @module
 */
import { SysError } from "../core/errors.ts";
import * as libc from "../sys/libc.ts";

/** The owner of a piece of scratch. */
export interface Owner {
  /** Process id. */
  readonly pid: number;
  /** Host name (`Deno.hostname()`). */
  readonly host: string;
  /** Start time of the process in clock ticks since boot (`/proc/PID/stat` field 22), or -1. */
  readonly start: number;
}

const decoder = new TextDecoder();

/**
 * Start time of process `pid` in clock ticks since boot, -1 when unknown, or undefined when no
 * such process runs. Read through libc: Deno's permissions would refuse /proc without
 * --allow-all.
 */
export function processStart(pid: number): number | undefined {
  let stat: string;
  const path = `/proc/${pid}/stat`;
  try {
    const fd = libc.open(path, libc.O.RDONLY);
    try {
      const buf = new Uint8Array(1024);
      stat = decoder.decode(buf.subarray(0, libc.pread(fd, buf, 0, path)));
    } finally {
      libc.close(fd, path);
    }
  } catch (e) {
    if (e instanceof SysError && e.code === "ENOENT") return undefined;
    return -1;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : -1;
}

/**
 * This process as an owner. Its start time is worked out from the system's uptime and this
 * process's age (late by at most the runtime's startup), not read from /proc, so that creating scratch adds no
 * file access to the audited I/O of a run.
 */
export function thisOwner(): Owner {
  const ticks = libc.clockTicksPerSecond();
  const start = Math.round((Deno.osUptime() - performance.now() / 1000) * ticks);
  return { pid: Deno.pid, host: Deno.hostname(), start };
}

/**
 * True when `owner` ran on this host and is no longer running (its pid is gone, or now belongs
 * to a process that started at another time). Owners on other hosts are never judged dead.
 */
export function ownerGone(owner: Owner): boolean {
  if (owner.host !== Deno.hostname()) return false;
  const start = processStart(owner.pid);
  if (start === undefined) return true;
  // A process that started more than a minute away from the owner reuses its pid (the owner's
  // own estimate of its start can be late by its startup time, seconds on a loaded machine).
  return owner.start >= 0 && start >= 0 &&
    Math.abs(start - owner.start) > 60 * libc.clockTicksPerSecond();
}

/** Parses an owner record written by `JSON.stringify(thisOwner())`; undefined when malformed. */
export function parseOwner(text: string): Owner | undefined {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    if (
      typeof o.pid === "number" && typeof o.host === "string" && typeof o.start === "number"
    ) {
      return { pid: o.pid, host: o.host, start: o.start };
    }
  } catch {
    // not an owner record
  }
  return undefined;
}
