/**
 * The `write` workload's measurement: the table's seeded frames written to a file with a backend
 * (open, every frame, fsync and close, timed), and the columns of its row.
 * @module
 */
import type { Backend } from "../backends/backend.ts";
import type { FsyncPolicy } from "../backends/backend.ts";
import { writeFrames } from "../backends/write.ts";
import type { EndianOption } from "../framings/types.ts";
import type { OptionValues } from "../framings/options.ts";
import type { Transfer } from "../io/transfer.ts";
import { col, type ColumnDoc } from "../report/human.ts";
import { finishAudit, type RowAudit, startAudit } from "../sys/audit.ts";
import { type PhaseSample, startMeter } from "../sys/meter.ts";
import { TableFrames } from "./table.ts";
import { TRANSFER_COLUMN_DOCS } from "./transfer.ts";

/** The columns of `write`'s row, with units, in CSV order. */
export const WRITE_COLUMN_DOCS: readonly ColumnDoc[] = [
  col("framing", "", "text", "framing written"),
  col("path", "", "text", "the file"),
  col("N", "particles", "particles", "particles per frame"),
  col("frames", "frames", "count", "frames written by this command"),
  col("file_bytes", "bytes", "size", "file size afterwards"),
  col("data_bytes", "bytes", "count", "payload written: frames x 28 N"),
  col("write_s", "s", "number", "open, every frame, fsync and close"),
  col("write_MiBps", "MiB/s", "number", "data_bytes / 2^20 / write_s"),
  col("write_user_s", "s", "number", "user CPU of the write (getrusage)"),
  col("write_sys_s", "s", "number", "system CPU of the write (getrusage)"),
  col("write_dev_bytes", "bytes", "count", "bytes the write sent to the device"),
  col("seed", "", "count", "data seed"),
  col("first_frame", "", "count", "index of the first frame written (0 unless --append)"),
  col(
    "fsync",
    "",
    "text",
    "fsync policy inside write_s: end, each (after every frame) or none (FILE is then " +
      "fsynced after the timing, before it is renamed into place)",
  ),
  ...TRANSFER_COLUMN_DOCS,
];

/** The settings of one write besides its backend and file: plain data, sent to a library child. */
export interface WriteJob {
  /** Particles per frame. */
  readonly n: number;
  /** Frames to write. */
  readonly count: number;
  /** Data seed. */
  readonly seed: number;
  /** Index of the first frame (its data and step). */
  readonly first: number;
  /** Byte order asked for, if any. */
  readonly endian?: EndianOption;
  /** When the write fsyncs. */
  readonly fsync: FsyncPolicy;
  /** `--bs` / `--direct`, if given. */
  readonly transfer?: Transfer;
  /** The backend's `--option KEY=VALUE` items as given. */
  readonly options: readonly string[];
}

/** A measured write: the write phase's sample and the audit trail of its calls. */
export interface WriteResult {
  /** Wall and CPU time, device bytes of the write phase. */
  readonly sample: PhaseSample;
  /** The calls sciobench made, for --audit. */
  readonly audit: RowAudit | undefined;
}

/**
 * Writes `job`'s frames to `file` with `backend` and measures it (open, every frame, fsync and
 * close); `beforeFrame(i)` runs before frame i is made (a library child's progress beat).
 */
export async function measureWrite(
  backend: Backend,
  file: string,
  create: "new" | "append",
  backendOptions: OptionValues,
  job: WriteJob,
  beforeFrame: (i: number) => void = () => {},
): Promise<WriteResult> {
  const frames = new TableFrames(job.n, job.seed);
  const { endian, fsync, transfer } = job;
  startAudit();
  let audit: RowAudit | undefined;
  try {
    const meter = startMeter("write");
    await writeFrames(
      backend,
      file,
      { create, endian, fsync, backendOptions, transfer },
      job.count,
      (i) => frames.frame(job.first + i),
      beforeFrame,
    );
    const sample = meter.stop();
    audit = finishAudit();
    return { sample, audit };
  } finally {
    if (audit === undefined) finishAudit();
  }
}
