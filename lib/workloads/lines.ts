/**
 * What a parent reads of the child processes it starts (readers' and loader's readers): their
 * stdout line by line, and the one-line error a failed child printed on stderr.
 * @module
 */

const decoder = new TextDecoder();

/** Reads a child's stdout line by line. */
export class LineReader {
  readonly #r: ReadableStreamDefaultReader<Uint8Array>;
  #text = "";
  #done = false;

  /** A reader of `stream` (the child's stdout), which it locks. */
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

  /** Stops reading: the rest of the stream is discarded. */
  async cancel(): Promise<void> {
    await this.#r.cancel();
  }

  /** Everything left until end of stream. */
  async rest(): Promise<string> {
    const lines: string[] = [];
    for (let l = await this.line(); l !== null; l = await this.line()) lines.push(l);
    return lines.join("\n");
  }
}

/** The one-line error a failed child printed (`sciobench: error: ...`), else its last stderr line. */
export function childError(stderr: string, code: number): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const err = lines.findLast((l) => l.startsWith("sciobench: error: "));
  if (err !== undefined) return err.slice("sciobench: error: ".length);
  return lines.at(-1) ?? `exited with code ${code} and no message`;
}

/** Sends SIGTERM to a child, unless it has exited already. */
export function killChild(c: Deno.ChildProcess): void {
  try {
    c.kill("SIGTERM");
  } catch {
    // already exited
  }
}

/** The lines of this process's stdin (a child's requests from its parent), until it ends. */
export async function* stdinLines(): AsyncGenerator<string> {
  let rest = "";
  for await (const text of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    rest += text;
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
}

const encoder = new TextEncoder();

/** Writes `message` as one JSON line on this process's stdout (a child's answer to its parent). */
export function sendLine(message: unknown): void {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  for (let done = 0; done < bytes.length;) done += Deno.stdout.writeSync(bytes.subarray(done));
}
