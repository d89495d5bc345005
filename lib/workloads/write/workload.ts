/**
 * `sciobench write`: writes the table workload's seeded frames to FILE and keeps it (how FILE is
 * changed safely is lib/workloads/write/file.ts; the timed write is lib/workloads/write/mod.ts).
 * @module
 */
import { IoError, UsageError } from "../../core/errors.ts";
import { parseCount, parseSeed } from "../../core/values.ts";
import { parseSize } from "../../core/sizes.ts";
import { checkOutputTarget, directoryOf } from "../../io/atomic.ts";
import { storeBytes } from "../../io/store.ts";
import { onInterrupt } from "../../io/interrupt.ts";
import { columnHelp } from "../../report/human.ts";
import type { Row } from "../../report/row.ts";
import { attachAudit } from "../../sys/audit.ts";
import { statfs } from "../../sys/libc.ts";
import type { FlagValues } from "../../cli/flags.ts";
import { checkFreeSpace, checkMemory } from "../checks.ts";
import { parseEndian } from "../settings.ts";
import { BYTES_PER_PARTICLE, TableFrames } from "../table/mod.ts";
import { transferColumns } from "../transfer.ts";
import type { PlannedRun, Workload, WorkloadHelp } from "../workload.ts";
import { writeFile, type WritePlan, type Written } from "./file.ts";
import { WRITE_COLUMN_DOCS } from "./mod.ts";

const HELP: WorkloadHelp = {
  title: "write the table's frames to FILE and keep it",
  usage: "--framing NAME --n N (--frames K | --size SIZE) [options] FILE",
  intro:
    `Writes K frames of position (N x 3 float32) and orientation (N x 4 float32), the same seeded data
'sciobench table' uses (frame i has step 10 i and element [0][0] = i), fsyncs, and prints one
row with the write's timing (in the --format asked). An existing FILE is never replaced unless
--force is given. With --append the frames are added to an existing FILE (raw, f77, ieeeio,
gsd, netcdf), numbered on from its last frame, in its byte order; if anything fails, FILE is put
back as it was. A new or replaced FILE is written to .FILE.sciobench-tmp-PID beside it and
renamed over FILE when complete; a library framing (hdf5, netcdf4, netcdf-lib, hdf4) writes it
in a child process, so a crash of the library is one line and leaves FILE as it was. Writers
lock FILE: a second writer gets one line and exit 1 (or --wait). SIGINT and SIGTERM leave FILE
as it was and exit 130 and 143.`,
  after: `Columns (CSV order):
${columnHelp(WRITE_COLUMN_DOCS)}`,
};

/** UsageError when the flags that choose what to write are missing or contradict each other. */
function checkRequired(values: FlagValues<"write">): void {
  if (values.append && values.force) {
    throw new UsageError(
      "write: --append adds to FILE and --force replaces it; give one of them",
    );
  }
  if (values.framing === undefined && !values.append) {
    throw new UsageError("write: --framing is required");
  }
  if (values.n === undefined) throw new UsageError("write: --n is required");
  if (values.frames === undefined && values.size === undefined) {
    throw new UsageError("write: --frames is required (or --size: frames of that many bytes)");
  }
  if (values.frames !== undefined && values.size !== undefined) {
    throw new UsageError("write: give --frames K or --size SIZE, not both");
  }
}

/** UsageError for the `--append` that cannot keep its undo journal's promise. */
function checkAppend(values: FlagValues<"write">): void {
  if (values.append && values.direct) {
    throw new UsageError(
      "write: --append cannot use --direct (its undo journal reads through the page cache); " +
        "append without --direct, or write a new file with it",
    );
  }
  if (values.append && values.fsync === "none") {
    throw new UsageError(
      "write: --append always fsyncs (its undo journal needs the data on disk before the " +
        "file's index or header points to it); use --fsync end or each",
    );
  }
}

/**
 * The write of `path` the flags ask for, every flag checked and the bounds known before
 * anything is allocated or created: one frame in memory, all of them on disk.
 */
function planWrite(values: FlagValues<"write">, path: string): WritePlan {
  checkRequired(values);
  const n = parseCount(values.n!, "--n");
  // --size as the table sizes its files: ceil(size / 28 N) frames
  const count = values.frames !== undefined
    ? parseCount(values.frames, "--frames")
    : Math.max(1, Math.ceil(parseSize(values.size!, "--size") / (BYTES_PER_PARTICLE * n)));
  const seed = parseSeed(values.seed);
  checkMemory(4 * BYTES_PER_PARTICLE * n, `a frame of N = ${n} particles`, "use a smaller --n");
  const dir = directoryOf(path);
  try {
    checkFreeSpace(
      statfs(dir),
      dir,
      BYTES_PER_PARTICLE * n * count,
      `${count} frames of N = ${n}`,
      "use a smaller --n or fewer --frames",
    );
  } catch (e) {
    if (!(e instanceof UsageError)) {
      throw new IoError(
        `${path}: cannot write there: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    throw e;
  }
  const endian = values.endian === undefined ? undefined : parseEndian(values.endian);
  checkAppend(values);
  const frames = new TableFrames(n, seed);
  // Everything is checked before any file is created, truncated or changed.
  if (values.out !== undefined) checkOutputTarget(values.out, values.force, "--out");
  return { path, dir, n, count, seed, endian, frames, values };
}

/** The row of a write of `p` that made `w`. */
function writeRow(p: WritePlan, w: Written): Row {
  const dataBytes = p.count * BYTES_PER_PARTICLE * p.n;
  const m = w.sample;
  return attachAudit({
    framing: w.backend.name,
    path: p.path,
    N: p.n,
    frames: p.count,
    file_bytes: storeBytes(p.path),
    data_bytes: dataBytes,
    write_s: m.wallS,
    write_MiBps: dataBytes / 2 ** 20 / m.wallS,
    write_user_s: m.userS,
    write_sys_s: m.sysS,
    write_dev_bytes: m.devWriteBytes,
    seed: p.seed,
    first_frame: w.first,
    fsync: w.fsync,
    ...transferColumns(w.transfer),
  }, w.audit);
}

/** The `write` workload. */
export const writeWorkload: Workload<FlagValues<"write">> = {
  name: "write",
  summary: "write the table's frames to a file and keep it",
  help: HELP,
  flags: [],
  positionals: ["FILE"],
  columns: WRITE_COLUMN_DOCS,
  keys: [],
  human: WRITE_COLUMN_DOCS.map((c) => c.name),
  inputs: (_values, [path]) => [["FILE", path!]],
  plan(values, _args, _output, [path]): PlannedRun {
    const p = planWrite(values, path!);
    // the framing of an --append without --framing is the file's, known once it is locked
    let written: Written | undefined;
    return {
      openAtFirstRow: true,
      get options(): Record<string, unknown> {
        return {
          framing: written?.backend.name ?? values.framing,
          n: p.n,
          frames: p.count,
          seed: p.seed,
          endian: p.endian,
          option: written?.backendOptions,
          fsync: written?.fsync ?? values.fsync,
          bs: written?.transfer?.bs ?? null,
          direct: written?.transfer?.direct ?? false,
        };
      },
      async run(add): Promise<void> {
        // A signal between the steps (after FILE is complete, before its row is out) still gets
        // one line and the signal's exit code, never the default action's silent death.
        const state = { complete: false };
        const whole = onInterrupt(() => state.complete ? `${p.path} is complete` : undefined);
        try {
          written = await writeFile(p, state);
          add(writeRow(p, written));
        } finally {
          whole();
        }
      },
    };
  },
};
