/**
 * Reader processes: started by the caller's launcher, each prints `ready`, waits for one byte on
 * stdin, reads and prints its report; all are released together and supervised to their end.
 * @module
 */
import { SciobenchError } from "../../core/errors.ts";
import { type ReaderReport } from "./packman.ts";

/** Starts one reader process for `path`; returns the process with stdin, stdout and stderr piped. */
export type ReaderLauncher = (path: string, fileIndex: number) => Deno.ChildProcess;

const decoder = new TextDecoder();

/** Reads a child's stdout: the `ready` line first, then the rest. */
class LineReader {
  readonly #r: ReadableStreamDefaultReader<Uint8Array>;
  #text = "";
  #done = false;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#r = stream.getReader();
  }

  /** The next line, or null at end of stream. */
  async line(): Promise<string | null> {
    for (;;) {
      const nl = this.#text.indexOf("\n");
      if (nl >= 0) {
        const line = this.#text.slice(0, nl);
        this.#text = this.#text.slice(nl + 1);
        return line;
      }
      if (this.#done) {
        const rest = this.#text;
        this.#text = "";
        return rest === "" ? null : rest;
      }
      const { value, done } = await this.#r.read();
      if (done) this.#done = true;
      else this.#text += decoder.decode(value, { stream: true });
    }
  }

  /** Everything left until end of stream. */
  async rest(): Promise<string> {
    const lines: string[] = [];
    for (let l = await this.line(); l !== null; l = await this.line()) lines.push(l);
    return lines.join("\n");
  }
}

/** The one-line error a failed reader printed (`sciobench: error: ...`), else its last stderr line. */
function childError(stderr: string, code: number): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const err = lines.findLast((l) => l.startsWith("sciobench: error: "));
  if (err !== undefined) return err.slice("sciobench: error: ".length);
  return lines.at(-1) ?? `exited with code ${code} and no message`;
}

function kill(c: Deno.ChildProcess): void {
  try {
    c.kill("SIGTERM");
  } catch {
    // already exited
  }
}

/**
 * Starts one reader per entry of `files` at once, releases them together when all are ready, and
 * returns their reports. A failed reader fails the run with its own message and exit code.
 */
export async function runReaderProcesses(
  files: readonly string[],
  launch: ReaderLauncher,
  fileIndex: (k: number) => number,
): Promise<ReaderReport[]> {
  const n = files.length;
  const children: Deno.ChildProcess[] = [];
  try {
    for (let k = 0; k < n; k++) children.push(launch(files[k]!, fileIndex(k)));
  } catch (e) {
    children.forEach(kill);
    throw e;
  }
  const stderr = children.map((c) => new Response(c.stderr).text());
  const outs = children.map((c) => new LineReader(c.stdout));
  const fail = async (k: number, code: number): Promise<never> => {
    const msg = childError(await stderr[k]!, code);
    throw new SciobenchError(`reader ${k + 1} of ${n} (${files[k]}): ${msg}`, code === 2 ? 2 : 1);
  };
  let released = false;
  try {
    const ready = await Promise.all(outs.map((o) => o.line()));
    const notReady = ready.findIndex((l) => l !== "ready");
    if (notReady >= 0) {
      children.forEach(kill);
      const st = await children[notReady]!.status;
      await fail(notReady, st.code === 0 ? 1 : st.code);
    }
    const go = new Uint8Array([0x67]);
    await Promise.all(children.map(async (c) => {
      const w = c.stdin.getWriter();
      await w.write(go);
      await w.close();
    }));
    released = true;
    const statuses = await Promise.all(children.map((c) => c.status));
    const texts = await Promise.all(outs.map((o) => o.rest()));
    for (let k = 0; k < n; k++) if (statuses[k]!.code !== 0) await fail(k, statuses[k]!.code);
    return texts.map((t, k) => {
      try {
        return JSON.parse(t.trim().split("\n").at(-1)!) as ReaderReport;
      } catch {
        throw new SciobenchError(
          `reader ${k + 1} of ${n} (${files[k]}) printed no report: ${t.slice(0, 200)}`,
          1,
        );
      }
    });
  } finally {
    if (!released) children.forEach(kill);
    // Let every child finish so none outlives the run (kill above covers failures before release).
    await Promise.allSettled(children.map((c) => c.status));
    await Promise.allSettled(stderr);
  }
}
