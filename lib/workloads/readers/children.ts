/**
 * Reader processes: started by the caller's launcher, each prints `ready`, waits for one byte on
 * stdin, reads and prints its report; all are released together and supervised to their end.
 * @module
 */
import { SciobenchError } from "../../core/errors.ts";
import { type ReaderReport } from "./packman.ts";
import { childError, killChild, LineReader } from "../lines.ts";

/** Starts one reader process for `path`; returns the process with stdin, stdout and stderr piped. */
export type ReaderLauncher = (path: string, fileIndex: number) => Deno.ChildProcess;

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
    children.forEach(killChild);
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
      children.forEach(killChild);
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
    if (!released) children.forEach(killChild);
    // Let every child finish so none outlives the run (kill above covers failures before release).
    await Promise.allSettled(children.map((c) => c.status));
    await Promise.allSettled(stderr);
  }
}
