/**
 * The IOspeed workload (FlexIO's IOspeed.cc, seed 000): per framing and dataset count n, time
 * open + n writes of one array (64^3 float64 by default) + close, with CPU time from times() in
 * clock ticks and from getrusage in seconds; optional per-framing averages over all counts and
 * trials, as IOspeed printed them; and the seed's own text layout (section banners, `Write  5:`
 * lines with one star per dataset, `Realtime=..., UserTime=..., SystemTime=..., Combined=...`).
 *
 * Differences from the seed, on purpose: real time comes from the monotonic clock (seconds,
 * fractional) instead of time(); the array is filled with a byte pattern instead of being left
 * uninitialised; the previous run's file is deleted before the timer starts, so no run pays for
 * freeing another's blocks (IOspeed truncated it inside the timing); one untimed dataset per
 * backend is written first, so loading libraries and compiling the write path do not land in the
 * first timed run; fsync is an option (`--fsync end|each`; none by default, as in the seed).
 * @module
 */
import { UsageError, VerifyError } from "../../core/errors.ts";
import {
  type ChunkLayout,
  type DType,
  DTYPE_SIZE,
  type Frame,
  type TypedArray,
  typedArray,
} from "../../framings/types.ts";
import { withScratchDir } from "../../io/scratch.ts";
import { removeStore, storeBytes } from "../../io/store.ts";
import type { AggregateSpec } from "../../mpi/aggregate.ts";
import { fencedPhase, rankScratchShare } from "../../mpi/phase.ts";
import { world } from "../../mpi/world.ts";
import { writeFrames } from "../../backends/write.ts";
import { backendByName } from "../../backends/registry.ts";
import { clockTicksPerSecond } from "../../sys/libc.ts";
import type { Backend, FsyncPolicy } from "../../backends/backend.ts";
import { type TableRenderer } from "../../report/output.ts";
import type { Row } from "../../report/row.ts";
import { attachAudit, auditOf, finishAudit, startAudit } from "../../sys/audit.ts";
import { backendOrder, cellError, EMPTY_SAMPLE } from "../cells.ts";
import { transferColumns } from "../transfer.ts";
import type { Transfer } from "../../io/transfer.ts";
import type { ColumnDoc } from "../../report/human.ts";
import type { ChartSpec } from "../../report/chart.ts";
import { columnDocs, STAT_COLUMN_NAMES, TRANSFER_COLUMN_NAMES } from "../columns.ts";
import { type PhaseSample, startMeter } from "../../sys/meter.ts";
import type { EndianOption } from "../../framings/types.ts";

/** The columns of `scaling` with units, in CSV order. */
export const SCALING_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["framing", "datasets", "bytes", "write_s", "write_user_ticks", "write_sys_ticks"],
  ["write_cpu_ticks", "clk_tck", "write_user_s", "write_sys_s", "write_MiBps", "endian"],
  ["repeat", "file_bytes", "write_dev_bytes", "fsync", "order"],
  TRANSFER_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
);

/** The CSV columns of `scaling`, in order. */
export const SCALING_COLUMNS: readonly string[] = SCALING_COLUMN_DOCS.map((c) => c.name);

/** The columns that name a scaling cell. */
export const SCALING_KEYS = [
  "framing",
  "datasets",
  "bytes",
  "clk_tck",
  "endian",
  "fsync",
] as const;

/** The columns the human table shows. */
export const SCALING_HUMAN_COLUMNS: readonly string[] = [
  "framing",
  "datasets",
  "bytes",
  "stat",
  "repeat",
  "write_s",
  "write_user_s",
  "write_sys_s",
  "write_MiBps",
  "error",
];

/** How the columns of `scaling` combine over MPI ranks (lib/mpi/aggregate.ts). */
export const SCALING_AGGREGATE: AggregateSpec = {
  sum: [
    ...["bytes", "write_user_ticks", "write_sys_ticks", "write_cpu_ticks", "write_user_s"],
    ...["write_sys_s", "file_bytes"],
  ],
  max: ["write_s"],
  rates: [{ rate: "write_MiBps", bytes: "bytes", seconds: "write_s" }],
};

/** The chart of `scaling`: wall and CPU seconds of the write against datasets, per backend. */
export const SCALING_CHART: ChartSpec = {
  title: "wall and CPU time against datasets written",
  mark: "line",
  x: { column: "datasets", title: "datasets written" },
  yTitle: "time (s, mean ± sd)",
  measures: [
    { name: "wall", columns: ["write_s"] },
    { name: "CPU (user + system)", columns: ["write_user_s", "write_sys_s"] },
  ],
  series: { columns: ["framing"], title: "backend" },
  facets: { column: { field: "measure", title: null, order: ["wall", "CPU (user + system)"] } },
  width: 260,
  height: 220,
};

/** What to measure. */
export interface ScalingOptions {
  /** Backends to compare, in section order. */
  readonly backends: readonly Backend[];
  /** Dataset counts per file (the seed: 5, 10, ..., 40). */
  readonly datasets: readonly number[];
  /** Shape of every dataset, slowest dimension first (the seed: 64 x 64 x 64). */
  readonly shape: readonly number[];
  /** Element type (the seed: float64). */
  readonly dtype: DType;
  /** Number of repeats (each runs every backend and count). */
  readonly repeat: number;
  /** When to fsync inside the timing (the seed: `none`). */
  readonly fsync: FsyncPolicy;
  /** Parent of the scratch directory (default: the current directory). */
  readonly dir?: string;
  /** Byte order for backends that offer a choice (default native). */
  readonly endian?: EndianOption;
  /** Byte order per backend name (the seed: HDF4 big-endian); overrides `endian`. */
  readonly endianOf?: (framing: string) => EndianOption;
  /** `--bs` / `--direct` (native framings; peers refuse). */
  readonly transfer?: Transfer;
}

/** One timed run: one backend, one dataset count, one trial. */
export interface ScalingRun {
  /** Backend name. */
  readonly framing: string;
  /** Datasets written. */
  readonly datasets: number;
  /** 1-based repeat. */
  readonly repeat: number;
  /** The backend's place in its repeat (1: measured first), when known. */
  readonly order?: number;
  /** Byte order the file was written in (`native`, `big`, `little`). */
  readonly endian?: EndianOption;
  /** The write's fsync policy (default none). */
  readonly fsync?: FsyncPolicy;
  /** Payload bytes written: datasets x dataset bytes (what MiB/s is computed from, as IOspeed did). */
  readonly bytes: number;
  /** Size of the file after close, bytes. */
  readonly fileBytes: number;
  /** `--bs` / `--direct` of the run, when given. */
  readonly transfer?: Transfer;
  /** Time and CPU of open + writes + close. */
  readonly sample: PhaseSample;
  /** Why the run failed (its numbers are then empty). */
  readonly error?: string;
}

/** Callbacks while the workload runs (progress stars, streaming rows). */
export interface ScalingObserver {
  /** A run starts (before its timer); `path` is the file it writes. */
  runStart?(backend: Backend, datasets: number, repeat: number, path: string): void;
  /** One dataset is about to be written (inside the timing, as IOspeed's `*`). */
  dataset?(): void;
  /** A run ended. */
  runEnd?(run: ScalingRun): void;
}

/** Bytes of one dataset of `shape` and `dtype`. */
export function datasetBytes(shape: readonly number[], dtype: DType): number {
  return shape.reduce((a, b) => a * b, 1) * DTYPE_SIZE[dtype];
}

/** A typed array of `dtype` over `bytes` (whose length is a multiple of the element size). */
function typedView(bytes: Uint8Array<ArrayBuffer>, dtype: DType): TypedArray {
  if (dtype === "char") return bytes;
  return typedArray(dtype, bytes.length / DTYPE_SIZE[dtype], bytes.buffer, bytes.byteOffset);
}

/** The array every dataset writes: a byte pattern (IOspeed wrote uninitialised memory). */
export function datasetArray(shape: readonly number[], dtype: DType): TypedArray {
  const bytes = new Uint8Array(datasetBytes(shape, dtype));
  const block = Math.min(bytes.length, 4096);
  for (let i = 0; i < block; i++) bytes[i] = (i * 131 + 7) & 255;
  for (let filled = block; filled < bytes.length; filled *= 2) {
    bytes.copyWithin(filled, 0, Math.min(filled, bytes.length - filled));
  }
  return typedView(bytes, dtype);
}

/**
 * Runs the workload: for each repeat (1..K), backend and count, one timed run; returns every run.
 *
 * Long (about 130 lines) on purpose: the seed's loop read top to bottom (open, write the
 * datasets, close, timed as one phase, fenced under MPI), with its failure rows in place.
 */
export async function runScaling(
  options: ScalingOptions,
  observer: ScalingObserver = {},
): Promise<ScalingRun[]> {
  const data = datasetArray(options.shape, options.dtype);
  const perDataset = data.byteLength;
  // One chunk `dataset/0` per frame, step = frame index: the same array and name in every frame
  // (HDF4 needs one layout), which IEEEIO stores with no attribute at all (16 + n x 2,097,188
  // bytes for 64^3 float64).
  const chunks = [{ name: "dataset/0", dtype: options.dtype, shape: options.shape, data }];
  const layout: ChunkLayout[] = [{ name: "dataset/0", dtype: options.dtype, shape: options.shape }];
  const frames: Frame[] = [];
  const frame = (i: number): Frame => (frames[i] ??= { step: i, chunks });
  const runs: ScalingRun[] = [];
  const endianOf = (name: string): EndianOption =>
    options.endianOf?.(name) ?? options.endian ?? "native";
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const transfer = options.transfer;
  /**
   * Writes one file of `n` datasets, timed: open, writes and close in this process, or in the
   * program's own process for a program peer (gfortran's runtime), which times itself.
   */
  const writeDatasets = async (
    backend: Backend,
    path: string,
    n: number,
    fsync: FsyncPolicy,
    endian: EndianOption,
    each?: () => void,
  ): Promise<PhaseSample> => {
    const program = backend.measureDatasetWrites;
    if (program === undefined) {
      const meter = startMeter("write");
      const sink = { create: "truncate", fsync, endian, transfer } as const;
      await writeFrames(backend, path, sink, n, frame, each);
      return meter.stop();
    }
    if (fsync !== "none") {
      throw new UsageError(`${backend.name} does not fsync: run it with --fsync none`);
    }
    const p = await program({ path, datasets: n, data: bytes, dtype: options.dtype });
    for (let k = 0; k < n; k++) each?.();
    const tck = clockTicksPerSecond();
    return {
      wallS: p.wallS,
      userS: p.userS,
      sysS: p.sysS,
      // times() ticks of the program, from its getrusage seconds
      userTicks: Math.round(p.userS * tck),
      sysTicks: Math.round(p.sysS * tck),
      clkTck: tck,
      devReadBytes: 0,
      devWriteBytes: p.devWriteBytes,
    };
  };
  const w = world();
  // under MPI each rank writes its own files in the directory all ranks share
  const suffix = w.size > 1 ? `.r${w.rank}` : "";
  await withScratchDir(options.dir, async (dir) => {
    // Untimed warm-up: one dataset per backend, so library loading and compilation of the write
    // path are not charged to the first timed run.
    await fencedPhase("warm-up", async () => {
      for (const backend of options.backends) {
        const path = `${dir}/warmup.${backend.name}${suffix}`;
        await writeDatasets(backend, path, 1, "none", endianOf(backend.name));
        removeStore(path);
      }
    });
    for (let repeat = 1; repeat <= options.repeat; repeat++) {
      // the backends' order alternates between repeats (A B, then B A), each row says its place
      for (const [place, backend] of backendOrder(options.backends, repeat).entries()) {
        const path = `${dir}/speed.${backend.name}${suffix}`;
        for (const n of options.datasets) {
          try {
            removeStore(path);
          } catch {
            // first run: nothing to remove
          }
          observer.runStart?.(backend, n, repeat, path);
          startAudit();
          const measure = () =>
            fencedPhase("write", async () => {
              const sample = await writeDatasets(
                backend,
                path,
                n,
                options.fsync,
                endianOf(backend.name),
                () => observer.dataset?.(),
              );
              const fileBytes = storeBytes(path);
              // A cheap check outside the timing: the file reads back with n datasets (a program
              // peer's file through the framing whose format it writes).
              const reader = backend.fileFraming === undefined
                ? backend
                : backendByName(backend.fileFraming);
              const source = reader.openReader(path, { layout, transfer });
              try {
                if (source.frameCount !== n) {
                  throw new VerifyError(
                    `${path}: ${source.frameCount} datasets read back, ${n} written`,
                  );
                }
              } finally {
                source.close();
              }
              return { sample, fileBytes };
            });
          const identity = {
            framing: backend.name,
            datasets: n,
            repeat,
            order: place + 1,
            endian: endianOf(backend.name),
            fsync: options.fsync,
            bytes: n * perDataset,
            ...(transfer ? { transfer } : {}),
          };
          let run: ScalingRun;
          try {
            const { sample, fileBytes } = await measure();
            run = attachAudit({ ...identity, fileBytes, sample }, finishAudit());
          } catch (e) {
            // A run the backend cannot hold: its row says why and the sweep goes on (not under
            // MPI, where the ranks meet in every run).
            const why = cellError(e);
            if (why === null || w.size > 1) throw e;
            finishAudit();
            try {
              removeStore(path);
            } catch {
              // nothing was written
            }
            run = { ...identity, fileBytes: 0, sample: EMPTY_SAMPLE, error: why };
          }
          runs.push(run);
          observer.runEnd?.(run);
        }
      }
    }
  }, rankScratchShare());
  return runs;
}

const MIB = 2 ** 20;

/** The result row of one run. */
export function scalingRow(run: ScalingRun): Row {
  if (run.error !== undefined) {
    const { framing, datasets, bytes } = run;
    return {
      framing,
      datasets,
      bytes,
      endian: run.endian ?? "native",
      repeat: run.repeat,
      fsync: run.fsync ?? "none",
      ...transferColumns(run.transfer),
      ...(run.order === undefined ? {} : { order: run.order }),
      stat: "run",
      error: run.error,
    };
  }
  const s = run.sample;
  return attachAudit({
    framing: run.framing,
    datasets: run.datasets,
    bytes: run.bytes,
    write_s: s.wallS,
    write_user_ticks: s.userTicks,
    write_sys_ticks: s.sysTicks,
    write_cpu_ticks: s.userTicks + s.sysTicks,
    clk_tck: s.clkTck,
    write_user_s: s.userS,
    write_sys_s: s.sysS,
    write_MiBps: run.bytes / MIB / s.wallS,
    repeat: run.repeat,
    endian: run.endian ?? "native",
    file_bytes: run.fileBytes,
    write_dev_bytes: s.devWriteBytes,
    fsync: run.fsync ?? "none",
    ...transferColumns(run.transfer),
    ...(run.order === undefined ? {} : { order: run.order }),
    stat: "run",
    error: "",
  }, auditOf(run));
}

/** IOspeed's section names: IEEE, HDF, F77 Unformatted; other framings by their name in capitals. */
const SEED_SECTIONS: Record<string, { banner: string; average: string; stderr: string }> = {
  ieeeio: { banner: "--------------IEEE--------------", average: "IEEE", stderr: "IEEEIO" },
  hdf4: { banner: "--------------HDF---------------", average: "HDF", stderr: "HDF" },
  f77: {
    banner: "-------------F77 Unformatted---------------",
    average: "F77 UNF",
    stderr: "F77 Unf",
  },
  "f77-gfortran": {
    banner: "-------------F77 Unformatted (gfortran)---------------",
    average: "F77 UNF (gfortran)",
    stderr: "F77 Unf (gfortran)",
  },
};

function section(framing: string): { banner: string; average: string; stderr: string } {
  const known = SEED_SECTIONS[framing];
  if (known) return known;
  const up = framing.toUpperCase();
  return { banner: `--------------${up}--------------`, average: up, stderr: up };
}

/** The label IOspeed printed on stderr before a run's stars: `IEEEIO <open PATH> Write  5 datasets:`. */
export function seedStderrLabel(framing: string, datasets: number, path: string): string {
  return `${section(framing).stderr} <open ${path}> Write ${
    String(datasets).padStart(2)
  } datasets:`;
}

/**
 * The seed's text layout as a row renderer: `Trial t` headers when there are several repeats, a
 * banner per framing section, `Write  5:*****` and `        Realtime=R, UserTime=U,
 * SystemTime=S, Combined=C` per run (R in seconds with 3 decimals, the others in clock ticks),
 * and with several repeats, at the end, IOspeed's `-------IEEE: Average of K trials------------`
 * block per framing over every count and repeat (times in seconds, `Megs/sec` the mean of the
 * runs' MiB/s, with the original's missing comma). A failed run prints `Write  5: failed: WHY`;
 * summary rows print nothing.
 */
export function seedRenderer(repeats: number): TableRenderer {
  let lastRepeat = -1;
  let lastFraming = "";
  const runs: Row[] = [];
  return {
    head: () => (repeats > 1 ? `Ntests=${repeats}\n` : ""),
    row(row: Row): string {
      if (row["stat"] !== "run") return "";
      if (!row["error"]) runs.push(row);
      const framing = String(row["framing"]);
      let out = "";
      const repeat = Number(row["repeat"]);
      if (repeat !== lastRepeat) {
        if (repeats > 1) out += `\nTrial ${repeat} --------------\n`;
        lastRepeat = repeat;
        lastFraming = "";
      }
      if (framing !== lastFraming) {
        out += `${section(framing).banner}\n`;
        lastFraming = framing;
      }
      const n = Number(row["datasets"]);
      if (row["error"]) {
        return out + `Write ${String(n).padStart(2)}: failed: ${row["error"]}\n`;
      }
      out += `Write ${String(n).padStart(2)}:${"*".repeat(n)}\n`;
      out +=
        `        Realtime=${Number(row["write_s"]).toFixed(3)}, UserTime=${
          row["write_user_ticks"]
        }, ` +
        `SystemTime=${row["write_sys_ticks"]}, Combined=${row["write_cpu_ticks"]}\n`;
      return out;
    },
    foot(): string {
      if (repeats < 2 || runs.length === 0) return "";
      let out = "\n";
      for (const framing of [...new Set(runs.map((r) => String(r["framing"])))]) {
        const rs = runs.filter((r) => r["framing"] === framing);
        const mean = (key: string) => rs.reduce((a, r) => a + Number(r[key]), 0) / rs.length;
        const tck = Number(rs[0]!["clk_tck"]);
        const f = (x: number) => x.toFixed(6);
        out += `-------${section(framing).average}: Average of ${repeats} trials------------\n`;
        out += `\tRealtime=${f(mean("write_s"))}, UserTime=${f(mean("write_user_ticks") / tck)}, ` +
          `SystemTime=${f(mean("write_sys_ticks") / tck)}, Combined=${
            f(mean("write_cpu_ticks") / tck)
          } ` +
          `Megs/sec=${f(mean("write_MiBps"))}\n`;
      }
      return out;
    },
  };
}
