/**
 * Running a C library on a file sciobench did not write, in a child process: this same sciobench
 * started with the hidden `__library-child` command (lib/workloads/child.ts), which limits its own CPU
 * time (RLIMIT_CPU) and answers requests as JSON lines on its stdout. The parent watches the
 * child's resident memory (what it uses, not what its libraries reserve) and kills it past the
 * limit, or when it stays silent too long. A crash, abort, hang or blowup of the library becomes
 * one line naming the file and the library (and the limit, when one stopped it), exit code 2.
 * @module
 */
import { SciobenchError } from "../core/errors.ts";
import { LIBRARY_MEMORY_ENV, libraryMemoryLimit } from "../peers/common.ts";
import type { Backend } from "../backends/backend.ts";
import { libraryName } from "../backends/capabilities.ts";
import { backendByName } from "../backends/registry.ts";
import { writeStdout } from "../report/output.ts";
import { warn } from "../core/diagnostics.ts";
import { close, O, open, pread } from "../sys/libc.ts";
import { selfCommand } from "../core/self.ts";

/** Environment variable: seconds the library may compute (CPU) or stay silent (wall) per step. */
export const LIBRARY_SECONDS_ENV = "SCIOBENCH_LIBRARY_SECONDS";

/** Default of {@link LIBRARY_SECONDS_ENV}: 60 s. */
export const DEFAULT_LIBRARY_SECONDS = 60;

/** The hidden command that runs the library child. */
export const LIBRARY_CHILD_COMMAND = "__library-child";

/** Environment variable through which the parent hands the limits to the child (JSON). */
export const CHILD_LIMITS_ENV = "SCIOBENCH_LIBRARY_CHILD_LIMITS";

/** Resident memory a library child may use for its runtime beyond the memory limit, bytes. */
export const RUNTIME_ROOM = 256 * 2 ** 20;

/** How often the parent reads a library child's resident memory, milliseconds. */
export const MEMORY_POLL_MS = 50;

/** Limits of a library child. */
export interface ChildLimits {
  /** Bytes of resident memory the child may use beyond {@link RUNTIME_ROOM} (polled). */
  readonly memoryBytes: number;
  /** CPU seconds per request without progress (RLIMIT_CPU, raised at each progress beat). */
  readonly cpuSeconds: number;
  /** Wall seconds the parent waits for any message before it kills the child. */
  readonly wallSeconds: number;
}

/** The limits from the environment (SCIOBENCH_LIBRARY_MEMORY, SCIOBENCH_LIBRARY_SECONDS). */
export function libraryLimits(): ChildLimits {
  let seconds = DEFAULT_LIBRARY_SECONDS;
  let text: string | undefined;
  try {
    text = Deno.env.get(LIBRARY_SECONDS_ENV);
  } catch {
    text = undefined;
  }
  if (text !== undefined && text !== "") {
    seconds = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text.trim()) || !(seconds >= 1) || seconds > 86400) {
      throw new SciobenchError(
        `bad ${LIBRARY_SECONDS_ENV} '${text}': expected seconds from 1 to 86400`,
        2,
      );
    }
  }
  return {
    memoryBytes: libraryMemoryLimit(),
    cpuSeconds: Math.ceil(seconds),
    wallSeconds: seconds * 2 + 30,
  };
}

let inChild = false;

/** Marks this process as the library child: its libraries run in-process. */
export function enterLibraryChild(): void {
  inChild = true;
}

/**
 * True when reading a user's file with `backend` goes through a library child: a peer library,
 * and this process is not already the child. Native framings always read in-process.
 */
export function isolates(backend: Backend): boolean {
  return backend.kind === "peer" && !inChild;
}

/** Passes a child's output to stdout and its notes to stderr, as the in-process command would. */
export function relayToTerminal(m: ChildMessage): void {
  if (m.t === "out") writeStdout(m.text);
  else if (m.t === "warn") warn(m.text);
}

/** What the parent asks the child to do with one file. */
export interface ChildRequest {
  /**
   * `info` streams the info text (with `settings.rows`: sends the file's facts, then a row per
   * chunk), `read` measures and returns a row, `check` reads everything silently; `write`
   * writes frames to `path` (a temporary file the parent owns) and returns what it measured;
   * `chunks` asks the library where each frame's chunks lie (Backend.frameChunks) and discards
   * the answer: a file that ends ok is safe to look up in-process the same way.
   */
  readonly op: "info" | "read" | "check" | "write" | "chunks";
  /** The file. */
  readonly path: string;
  /** The backend that reads it (a peer). */
  readonly framing: string;
  /** Reader options as given (`--option KEY=VALUE` items). */
  readonly options?: readonly string[];
  /**
   * Command-specific settings (info: json or rows; read: seed, verify, sample, cache; write: a
   * WriteJob).
   */
  readonly settings?: Record<string, unknown>;
}

/** One message from the child. */
export type ChildMessage =
  | { readonly t: "out"; readonly text: string }
  | { readonly t: "warn"; readonly text: string }
  | { readonly t: "row"; readonly row: Record<string, unknown> }
  | { readonly t: "facts"; readonly facts: Record<string, unknown> }
  | { readonly t: "beat" }
  | {
    readonly t: "end";
    readonly error?: string;
    readonly exitCode?: number;
    readonly internal?: boolean;
  };

/** How one request ended. */
export type ChildOutcome =
  | { readonly kind: "ok" }
  /** The child reported an error (one line) with an exit code; `internal` marks a bug. */
  | {
    readonly kind: "error";
    readonly message: string;
    readonly exitCode: number;
    readonly internal: boolean;
  }
  /**
   * The child died: by `signal`, or with `code`; `stderr` is what the library printed;
   * `residentBytes` is set when the parent killed it for using more memory than the limit.
   */
  | {
    readonly kind: "crash";
    readonly signal: string | null;
    readonly code: number | null;
    readonly stderr: string;
    readonly residentBytes?: number;
  }
  /** The child went silent for longer than the wall limit and was killed. */
  | { readonly kind: "hang" };

const encoder = new TextEncoder();

const statusBuf = new Uint8Array(4096);

/** Resident memory (VmRSS) of process `pid`, bytes; undefined once it is gone. */
function residentBytes(pid: number): number | undefined {
  // Through libc: Deno guards /proc behind --allow-all.
  let fd: number;
  try {
    fd = open(`/proc/${pid}/status`, O.RDONLY);
  } catch {
    return undefined;
  }
  let n = 0;
  try {
    n = pread(fd, statusBuf, 0);
  } catch {
    return undefined;
  } finally {
    close(fd);
  }
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(new TextDecoder().decode(statusBuf.subarray(0, n)));
  return m ? Number(m[1]) * 1024 : undefined;
}

function writeStderr(text: string): void {
  const b = encoder.encode(text);
  for (let done = 0; done < b.length;) done += Deno.stderr.writeSync(b.subarray(done));
}

/** A running library child; requests are answered one after another. */
export class LibraryChild {
  readonly limits: ChildLimits;
  #process: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<string>;
  #stderrTail = "";
  #stderrDone: Promise<void>;
  #dead = false;
  #memoryWatch: ReturnType<typeof setInterval> | undefined;
  #overMemory: number | undefined;

  private constructor(limits: ChildLimits, relayNotes: boolean) {
    this.limits = limits;
    const self = selfCommand();
    this.#process = new Deno.Command(self.cmd, {
      args: [...self.args, LIBRARY_CHILD_COMMAND],
      env: { [CHILD_LIMITS_ENV]: JSON.stringify(limits) },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#stdin = this.#process.stdin.getWriter();
    // What the library uses, polled: an address-space limit would count what it reserves.
    const pid = this.#process.pid;
    const most = limits.memoryBytes + RUNTIME_ROOM;
    const watch = setInterval(() => {
      const rss = residentBytes(pid);
      if (rss === undefined || rss <= most || this.#overMemory !== undefined) return;
      this.#overMemory = rss;
      this.#kill();
    }, MEMORY_POLL_MS);
    Deno.unrefTimer(watch);
    this.#memoryWatch = watch;
    this.#lines = lines(this.#process.stdout)[Symbol.asyncIterator]();
    const stderr = this.#process.stderr;
    this.#stderrDone = (async () => {
      // sciobench's own notes pass through; a library's chatter is kept only as crash detail.
      for await (const line of lines(stderr)) {
        if (line.startsWith("sciobench: ")) {
          if (relayNotes) writeStderr(line + "\n");
        } else if (line.trim() !== "" && this.#stderrTail.length < 8192) {
          this.#stderrTail += line.trim() + "\n";
        }
      }
    })();
  }

  /**
   * Starts a child with `limits`; `relayNotes` passes its `sciobench: ` notes on to stderr.
   * A failed spawn is one line (SciobenchError, exit 1).
   */
  static start(limits: ChildLimits = libraryLimits(), relayNotes = true): LibraryChild {
    try {
      return new LibraryChild(limits, relayNotes);
    } catch (e) {
      const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
      throw new SciobenchError(`cannot start the library child process: ${why}`, 1);
    }
  }

  /** True when the child has died (after a crash or hang); start a new one. */
  get dead(): boolean {
    return this.#dead;
  }

  /** Sends `request` and passes every message to `onMessage` until the request ends. */
  async request(
    request: ChildRequest,
    onMessage: (m: ChildMessage) => void = () => {},
  ): Promise<ChildOutcome> {
    if (this.#dead) throw new Error("library child used after it died");
    try {
      await this.#stdin.write(encoder.encode(JSON.stringify(request) + "\n"));
    } catch {
      return await this.#died();
    }
    for (;;) {
      const next = await this.#nextLine();
      if (next === "hang") {
        this.#kill();
        await this.#died();
        return { kind: "hang" };
      }
      if (next === null) return await this.#died();
      let m: ChildMessage;
      try {
        m = JSON.parse(next) as ChildMessage;
      } catch {
        continue; // a library printed on stdout: not a message
      }
      if (typeof m !== "object" || m === null || typeof m.t !== "string") continue;
      if (m.t === "end") {
        if (m.error === undefined) return { kind: "ok" };
        return {
          kind: "error",
          message: m.error,
          exitCode: m.exitCode ?? 1,
          internal: m.internal ?? false,
        };
      }
      onMessage(m);
    }
  }

  /** The next line from the child, null at its end, "hang" after the wall limit of silence. */
  async #nextLine(): Promise<string | null | "hang"> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silence = new Promise<"hang">((resolve) => {
      timer = setTimeout(() => resolve("hang"), this.limits.wallSeconds * 1000);
    });
    try {
      const r = await Promise.race([this.#lines.next(), silence]);
      if (r === "hang") return r;
      return r.done ? null : r.value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the child at once (SIGKILL), as when this process is interrupted. */
  kill(): void {
    this.#dead = true;
    this.#kill();
  }

  #kill(): void {
    try {
      this.#process.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  #unwatch(): void {
    if (this.#memoryWatch !== undefined) clearInterval(this.#memoryWatch);
    this.#memoryWatch = undefined;
  }

  async #died(): Promise<ChildOutcome> {
    this.#dead = true;
    const status = await this.#process.status;
    this.#unwatch();
    await this.#stderrDone;
    try {
      await this.#stdin.close();
    } catch {
      // the pipe is broken: the child is gone
    }
    return {
      kind: "crash",
      signal: status.signal,
      code: status.signal === null ? status.code : null,
      stderr: this.#stderrTail,
      ...(this.#overMemory !== undefined ? { residentBytes: this.#overMemory } : {}),
    };
  }

  /** Ends the child (closing its input lets it exit by itself) and waits for it. */
  async close(): Promise<void> {
    if (this.#dead) return;
    this.#dead = true;
    try {
      await this.#stdin.close();
    } catch {
      this.#kill();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.#kill();
        resolve();
      }, 10_000);
    });
    await Promise.race([this.#process.status, late]);
    clearTimeout(timer);
    await this.#process.status;
    this.#unwatch();
    await this.#stderrDone;
  }
}

/** Splits a byte stream into lines (without the newline). */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    rest += text;
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest !== "") yield rest;
}

/**
 * The one line for a child that died or hung while its library read (or wrote) `path`: a limit
 * that stopped it is named with how to raise it; a crash while reading calls the file probably
 * damaged, one while writing says only that the library crashed.
 */
export function failureMessage(
  outcome: ChildOutcome & { kind: "crash" | "hang" },
  framing: string,
  path: string,
  limits: ChildLimits,
  doing: "reading" | "writing" = "reading",
): string {
  const lib = `the ${libraryName(backendByName(framing))} library`;
  const file = `'${path}'`;
  // A limit that stopped the library is named with how to raise it: no verdict on the file.
  const raise = `raise it with ${LIBRARY_SECONDS_ENV}=SECONDS`;
  if (outcome.kind === "hang") {
    return `${lib} did not respond for ${limits.wallSeconds} s ${doing} ${file} and was ` +
      `stopped (the limit is twice ${LIBRARY_SECONDS_ENV} plus 30 s; ${raise})`;
  }
  if (outcome.residentBytes !== undefined) {
    return `${lib} used ${outcome.residentBytes} bytes of memory ${doing} ${file} and was ` +
      `stopped (limit ${limits.memoryBytes} bytes plus ${RUNTIME_ROOM} for the runtime; raise ` +
      `it with ${LIBRARY_MEMORY_ENV}=SIZE)`;
  }
  if (outcome.signal === "SIGXCPU") {
    return `${lib} used more than ${limits.cpuSeconds} s of CPU time without progress ${doing} ` +
      `${file} and was stopped (limit ${LIBRARY_SECONDS_ENV}; ${raise})`;
  }
  const oom = /out of memory|cannot allocate|allocation failed|bad_alloc/i.test(outcome.stderr);
  if (oom) {
    return `${lib} ran out of memory ${doing} ${file} (limit ${limits.memoryBytes} bytes; ` +
      `raise it with ${LIBRARY_MEMORY_ENV}=SIZE, if the machine has it)`;
  }
  const first = outcome.stderr.split("\n")[0]!;
  const detail = first ? `: ${first.slice(0, 160)}` : "";
  const how = outcome.signal ?? `exit code ${outcome.code}`;
  const verdict = doing === "reading" ? "; the file is probably damaged" : "";
  return `${lib} crashed (${how}${detail}) ${doing} ${file}${verdict}`;
}

/**
 * Runs one request in a new library child and ends it; messages go to `onMessage`. A library
 * error comes back as the SciobenchError the child raised; a crash or hang as one line, exit 2.
 */
export async function runIsolated(
  request: ChildRequest,
  onMessage: (m: ChildMessage) => void,
): Promise<void> {
  const child = LibraryChild.start();
  let outcome: ChildOutcome;
  try {
    outcome = await child.request(request, onMessage);
  } finally {
    await child.close();
  }
  if (outcome.kind === "ok") return;
  if (outcome.kind === "error") throw new SciobenchError(outcome.message, outcome.exitCode);
  throw new SciobenchError(failureMessage(outcome, request.framing, request.path, child.limits), 2);
}
