/**
 * The library child (`sciobench __library-child`, hidden): limits its own CPU time (RLIMIT_CPU,
 * raised at each sign of progress; its resident memory is watched by the parent, see
 * lib/workloads/isolate.ts), then answers requests (JSON lines on stdin) by running a peer
 * library in-process, with JSON lines on stdout (see lib/workloads/isolate.ts). Requests are served
 * one after another until stdin ends, so many files can share one child.
 * @module
 */
import { SciobenchError, UsageError } from "../core/errors.ts";
import { getrusage, mapRegion, RLIMIT, setrlimit } from "../sys/libc.ts";
import { chunkRow, forEachChunk, infoFacts, streamInfo } from "./info/mod.ts";
import {
  CHILD_LIMITS_ENV,
  type ChildLimits,
  type ChildMessage,
  type ChildRequest,
  enterLibraryChild,
  libraryLimits,
} from "./isolate.ts";
import { directReadRefusal, libraryName } from "../backends/capabilities.ts";
import { LIBRARY_MEMORY_ENV } from "../peers/common.ts";
import { PEERS } from "../peers/mod.ts";
import { openUserFile } from "./open.ts";
import { measureRead } from "./read/mod.ts";
import { measureWrite, type WriteJob } from "./write/mod.ts";
import { backendByName, usableBackend } from "../backends/registry.ts";
import { backendOptionArgs } from "./settings.ts";
import { sendLine, stdinLines } from "./lines.ts";

function send(m: ChildMessage): void {
  sendLine(m);
}

function cpuSecondsUsed(): number {
  const r = getrusage();
  return (r.userUs + r.sysUs) / 1e6;
}

/** Allows `seconds` more CPU time from now (SIGXCPU when exceeded). */
function allowCpu(seconds: number): void {
  setrlimit(RLIMIT.CPU, Math.ceil(cpuSecondsUsed()) + seconds, Infinity);
}

function readLimits(): ChildLimits {
  const text = Deno.env.get(CHILD_LIMITS_ENV);
  return text ? JSON.parse(text) as ChildLimits : libraryLimits();
}

/** Sends a progress beat at most once a second, and allows more CPU time. */
function beater(limits: ChildLimits): () => void {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < 1000) return;
    last = now;
    allowCpu(limits.cpuSeconds);
    send({ t: "beat" });
  };
}

/** Runs one request in-process. */
async function serve(
  request: ChildRequest,
  limits: ChildLimits,
  fault: string | undefined,
): Promise<void> {
  allowCpu(limits.cpuSeconds);
  const beat = beater(limits);
  if (request.op === "write") {
    await serveWrite(request, beat, fault);
    return;
  }
  if (fault) injectFault(fault);
  const { path, framing } = request;
  const options = request.options ?? [];
  const settings = request.settings ?? {};
  if (request.op === "read") {
    const row = await measureRead(path, framing, options, {
      seed: Number(settings.seed ?? 1),
      verify: settings.verify === true,
      sample: typeof settings.sample === "number" ? settings.sample : Infinity,
      allowExternal: settings.allowExternal === true,
      cache: settings.cache === "warm" ? "warm" : "cold",
    }, beat);
    send({ t: "row", row });
    return;
  }
  if (request.op === "check") {
    readWhole(path, framing, options, beat);
    return;
  }
  if (request.op === "chunks") {
    lookUpChunks(path, framing);
    return;
  }
  const source = openUserFile(path, framing, options, "info", {
    allowExternal: settings.allowExternal === true,
  });
  try {
    if (settings.rows === true) {
      send({ t: "facts", facts: infoFacts(source) });
      forEachChunk(source, (c) => {
        send({ t: "row", row: chunkRow(c) });
        beat();
      });
    } else {
      streamInfo(source, settings.json === true, (text: string) => {
        send({ t: "out", text });
        beat();
      });
    }
  } finally {
    source.close();
  }
}

/**
 * Writes the frames of the request's WriteJob to its path (a new file) with its peer, and sends
 * what was measured as the row. The test fault, if any, strikes before the third frame, with
 * the file half written.
 */
async function serveWrite(
  request: ChildRequest,
  beat: () => void,
  fault: string | undefined,
): Promise<void> {
  const job = request.settings as unknown as WriteJob;
  const backend = usableBackend(request.framing);
  const backendOptions = backendOptionArgs(backend, job.options, "write");
  // Ctrl-C reaches the whole process group: the parent, which owns the file, stops this child.
  const ignore = () => {};
  Deno.addSignalListener("SIGINT", ignore);
  try {
    const result = await measureWrite(backend, request.path, "new", backendOptions, job, (i) => {
      beat();
      if (fault && i === 2) injectFault(fault);
    });
    send({ t: "row", row: { ...result } });
  } finally {
    Deno.removeSignalListener("SIGINT", ignore);
  }
}

/**
 * Reads all of a file the way `info` and `read` do (every chunk's CRC, every frame) and discards
 * the result: what the fuzzer runs on each mutant. `beat` is called as work progresses.
 */
export function readWhole(
  path: string,
  framing: string,
  options: readonly string[] = [],
  beat: () => void = () => {},
): void {
  const source = openUserFile(path, framing, options, "info", {}, () => {});
  try {
    streamInfo(source, false, beat, () => {});
    if (source.locate) {
      for (let f = 0; f < source.frameCount; f++) {
        source.readFrame(f);
        if ((f & 63) === 0) beat();
      }
    }
  } finally {
    source.close();
  }
}

/**
 * Asks `framing`'s library where each frame's chunks of `path` lie, as `--access direct` does
 * before its reads, and discards the answer. UsageError when the backend has no such lookup.
 */
function lookUpChunks(path: string, framing: string): void {
  const backend = backendByName(framing);
  const why = directReadRefusal(backend);
  if (why !== null) throw new UsageError(`--access direct: ${why}`);
  backend.frameChunks!(path);
}

/** The child's main loop; returns the exit code when stdin ends. */
export async function runLibraryChild(): Promise<number> {
  enterLibraryChild();
  const limits = readLimits();
  // The libraries are loaded once, before the first request (no address-space limit: what a
  // library reserves is not what it uses; the parent watches the resident memory).
  for (const peer of PEERS) peer.unavailable();
  const fault = Deno.env.get("SCIOBENCH_CHILD_FAULT");
  for await (const line of stdinLines()) {
    if (line.trim() === "") continue;
    const request = JSON.parse(line) as ChildRequest;
    try {
      await serve(request, limits, fault);
      send({ t: "end" });
    } catch (e) {
      if (e instanceof SciobenchError) {
        send({ t: "end", error: e.message, exitCode: e.exitCode });
      } else if (e instanceof RangeError && /allocation failed/i.test(e.message)) {
        // A buffer the memory limit refused: the same one line as a library that ran out.
        send({
          t: "end",
          error:
            `the ${
              libraryName(backendByName(request.framing))
            } library ran out of memory reading ` +
            `'${request.path}' (limit ${limits.memoryBytes} bytes; raise it with ` +
            `${LIBRARY_MEMORY_ENV}=SIZE)`,
          exitCode: 2,
        });
      } else {
        const why = e instanceof Error ? e.message : String(e);
        send({
          t: "end",
          error: `internal error: ${why} (this is a bug; rerun with SCIOBENCH_DEBUG=1 for details)`,
          exitCode: 1,
          internal: true,
        });
        if (Deno.env.get("SCIOBENCH_DEBUG") === "1") console.error(e);
      }
    }
  }
  return 0;
}

/**
 * Test hook (`SCIOBENCH_CHILD_FAULT`): makes the child fail as a broken library would, so tests
 * can check what the parent makes of it: `segv`, `abort`, `spin` (CPU), `sleep` (wall), `grow`
 * (memory used), `reserve` (64 GiB of address space reserved, never used: not a use of memory).
 */
function injectFault(fault: string): void {
  if (fault === "segv") new Deno.UnsafePointerView(Deno.UnsafePointer.create(8n)!).getInt32();
  if (fault === "abort") Deno.kill(Deno.pid, "SIGABRT");
  if (fault === "spin") { for (;;) Math.sqrt(Math.random()); }
  if (fault === "sleep") {
    const until = Date.now() + 3_600_000;
    const flag = new Int32Array(new SharedArrayBuffer(4));
    while (Date.now() < until) Atomics.wait(flag, 0, 0, 1000);
  }
  if (fault === "reserve") mapRegion(64 * 2 ** 30);
  if (fault === "grow") {
    const hoard: number[][] = [];
    for (;;) hoard.push(new Array(1 << 20).fill(1.5));
  }
}
