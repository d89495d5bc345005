/**
 * One reader process of `sciobench loader --readers K` (the hidden `sciobench loader _reader`):
 * told its job on stdin, it opens the file itself, then reads and verifies its batches of each
 * epoch as the consumer allows them, answering on stdout (the protocol is in ./readers.ts).
 * @module
 */
import { SciobenchError, UsageError, VerifyError } from "../../core/errors.ts";
import { finishAudit, nextAudit, startAudit } from "../../sys/audit.ts";
import { type Meter, startMeter } from "../../sys/meter.ts";
import { sendLine, stdinLines } from "../lines.ts";
import { epochSamples, type LoaderFile, readBatch } from "./mod.ts";
import { openLoader } from "./open.ts";
import { readerBatches, type ReaderJob, type ReaderMessage } from "./readers.ts";

function send(m: ReaderMessage): void {
  sendLine(m);
}

/** Runs the reader process on its stdin until it ends; a failure is reported, then thrown. */
export async function runLoaderReader(): Promise<void> {
  const lines = stdinLines();
  const first = await lines.next();
  if (first.done) {
    throw new UsageError(
      "loader _reader: no job on stdin (a reader process of 'sciobench loader --readers K')",
    );
  }
  try {
    const job = JSON.parse(first.value) as ReaderJob;
    startAudit();
    try {
      const file = openLoader(job.open);
      try {
        send({ t: "ready", frames: file.source.frameCount });
        await serve(job, file, lines);
      } finally {
        file.source.close();
      }
    } finally {
      finishAudit();
    }
  } catch (e) {
    if (e instanceof SciobenchError) {
      // by class, not by name: a bundle may rename classes
      const kind = e instanceof VerifyError
        ? "verify"
        : e instanceof UsageError
        ? "usage"
        : "other";
      send({ t: "error", kind, message: e.message, exitCode: e.exitCode });
    }
    throw e;
  }
}

/** Reads the batches of each epoch (`e`), one for each credit (`c`), until the input ends. */
async function serve(job: ReaderJob, file: LoaderFile, lines: AsyncGenerator<string>) {
  const s = job.settings;
  const frames = file.source.frameCount;
  let epoch = 0;
  let order: Uint32Array = new Uint32Array(0);
  let mine: number[] = [];
  let next = 0;
  let meter: Meter | undefined;
  const endEpoch = (m: Meter) => {
    const { userS, sysS, devReadBytes } = m.stop();
    const phase = nextAudit()?.phases.find((p) => p.name === "epoch");
    send({ t: "epoch", pid: Deno.pid, userS, sysS, devReadBytes, phase });
  };
  for await (const line of lines) {
    if (line === "e") {
      epoch++;
      order = epochSamples(frames, epoch, s);
      mine = readerBatches(Math.ceil(order.length / s.batchSize), job.reader, s.readers);
      next = 0;
      meter = startMeter("epoch");
      if (mine.length === 0) endEpoch(meter);
    } else if (line === "c") {
      const b = mine[next++];
      if (b === undefined || meter === undefined) {
        throw new SciobenchError(`loader _reader: more batches asked than epoch ${epoch} has`, 1);
      }
      const batch = order.subarray(b * s.batchSize, Math.min(order.length, (b + 1) * s.batchSize));
      const bytes = await readBatch(file.source, batch, file.expected, s.queue);
      send({ t: "batch", b, bytes });
      if (next === mine.length) endEpoch(meter);
    }
  }
}
