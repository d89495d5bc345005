/**
 * The `write` workload's measurement: the table's seeded frames written to a file with a backend
 * (open, every frame, fsync and close, timed), and the columns of its row.
 * @module
 */
import type { Backend } from "../../backends/backend.ts";
import type { FsyncPolicy } from "../../backends/backend.ts";
import { writeFrames } from "../../backends/write.ts";
import type { EndianOption } from "../../framings/types.ts";
import type { OptionValues } from "../../framings/options.ts";
import type { Transfer } from "../../io/transfer.ts";
import type { ColumnDoc } from "../../report/human.ts";
import { columnDocs, WRITE_COLUMN_NAMES } from "../columns.ts";
import { finishAudit, type RowAudit, startAudit } from "../../sys/audit.ts";
import { type PhaseSample, startMeter } from "../../sys/meter.ts";
import { TableFrames } from "../table/mod.ts";

/** The columns of `write`'s row, with units, in CSV order (from the schema). */
export const WRITE_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(WRITE_COLUMN_NAMES);

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
      // mutant: write-cli-transfer
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
