/**
 * The record-by-record workload (seed 003, Ed Hartnett's 2003 netCDF-4 timing test): one
 * variable of shape records x y x z (the seed: 2000 x 300 x 500) written one record at a time
 * per framing and byte order (open, each record, fsync, close: timed), dropped from the page
 * cache, then read back one record at a time (open, each record, close: timed) and checked.
 * Reports wall time, CPU time (user + system) and MiB/s per phase, and averages over trials,
 * so the seed's "avg CPU time" / "avg User Time" (its wall clock) lines can be reproduced.
 *
 * Differences from the seed, on purpose: CPU and wall time come from getrusage and the
 * monotonic clock for the whole process; the write phase includes an fsync before close (the
 * seed's wall times suggest the data reached the disk, but its code is lost); reads start from a
 * cold page cache (posix_fadvise, no root needed); every record read is verified inside the
 * timing (one memcmp per record).
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { UsageError, VerifyError } from "../../core/errors.ts";
import type {
  ByteOrder,
  ChunkLayout,
  DType,
  EndianOption,
  Frame,
  TypedArray,
} from "../../framings/types.ts";
import type { OptionValues } from "../../framings/options.ts";
import { DTYPE_SIZE, typedArray } from "../../framings/types.ts";
import { dropCache, residency } from "../../io/cache.ts";
import { signalPoint, withScratchDir } from "../../io/scratch.ts";
import type { AggregateSpec } from "../../mpi/aggregate.ts";
import { fencedPhase, rankScratchShare } from "../../mpi/phase.ts";
import { planSharedFile, sharedPart, writeSharedFrames } from "../../mpi/shared.ts";
import { world } from "../../mpi/world.ts";
import { writeFrames } from "../../backends/write.ts";
import type { Backend, FsyncPolicy } from "../../backends/backend.ts";
import { type TableRenderer } from "../../report/output.ts";
import type { Row } from "../../report/row.ts";
import type { ColumnDoc } from "../../report/human.ts";
import type { ChartSpec } from "../../report/chart.ts";
import { columnDocs, STAT_COLUMN_NAMES, TRANSFER_COLUMN_NAMES } from "../columns.ts";
import type { Progress } from "../../report/progress.ts";
import { statfs } from "../../sys/libc.ts";
import { attachAudit, auditOf, finishAudit, startAudit } from "../../sys/audit.ts";
import { type PhaseSample, startMeter } from "../../sys/meter.ts";
import { cellError, EMPTY_SAMPLE, sharedFraming } from "../cells.ts";
import { ColdReads, readOverlap, transferColumns } from "../transfer.ts";
import type { Transfer } from "../../io/transfer.ts";
import { nativeReads, readFramesOverlapped } from "../../backends/overlap.ts";
import { fillRandom, Rng, verifyFrame } from "../pattern.ts";

/** The columns of `records` with units, in CSV order (from the schema, lib/workloads/columns.ts). */
export const RECORDS_COLUMN_DOCS: readonly ColumnDoc[] = columnDocs(
  ["framing", "endian", "phase", "shape", "bytes", "wall_s", "cpu_s", "user_s", "sys_s"],
  ["MiBps", "repeat", "file_bytes", "dev_read_bytes", "dev_write_bytes"],
  ["resident_after_drop", "fsync", "cold_ok"],
  TRANSFER_COLUMN_NAMES,
  STAT_COLUMN_NAMES,
);

/** The CSV columns of `records`, in order. */
export const RECORDS_COLUMNS: readonly string[] = RECORDS_COLUMN_DOCS.map((c) => c.name);

/** The columns that name a records cell. */
export const RECORDS_KEYS = ["framing", "endian", "phase", "shape", "bytes", "fsync"] as const;

/** The columns the human table shows. */
export const RECORDS_HUMAN_COLUMNS: readonly string[] = [
  "framing",
  "endian",
  "phase",
  "bytes",
  "stat",
  "repeat",
  "wall_s",
  "cpu_s",
  "MiBps",
  "error",
];

/** How the columns of `records` combine over MPI ranks (lib/mpi/aggregate.ts). */
export const RECORDS_AGGREGATE: AggregateSpec = {
  sum: ["bytes", "cpu_s", "user_s", "sys_s", "file_bytes", "dev_read_bytes", "dev_write_bytes"],
  max: ["wall_s", "resident_after_drop"],
  rates: [{ rate: "MiBps", bytes: "bytes", seconds: "wall_s" }],
};

/** The chart of `records`: wall and CPU seconds per backend and byte order, write and read. */
export const RECORDS_CHART: ChartSpec = {
  command: "records",
  title: "wall and CPU time per backend and byte order",
  mark: "bar",
  x: { column: "framing", title: "backend" },
  yTitle: "time (s, mean ± sd)",
  measures: [{ name: "wall", columns: ["wall_s"] }, { name: "CPU", columns: ["cpu_s"] }],
  series: { columns: ["framing"], title: "backend" },
  facets: {
    row: { field: "measure", title: null, order: ["wall", "CPU"] },
    column: { field: "phase", title: "phase", order: ["write", "read"] },
  },
  offset: { column: "endian", title: "byte order" },
  width: 300,
  height: 160,
};

/** Element types the workload writes: every number type (the seed wrote integers). */
export type RecordsType = Exclude<DType, "char">;

/** One (backend, byte order) pair to measure. */
export interface RecordsTarget {
  /** The backend. */
  readonly backend: Backend;
  /** Byte order as requested (`big`, `little` or `native`). */
  readonly endian: EndianOption;
}

/** What to measure. */
export interface RecordsOptions {
  /** Backends with byte orders, in measuring order (see {@link recordsTargets}). */
  readonly targets: readonly RecordsTarget[];
  /** Shape: records first, then the shape of one record (the seed: 2000 x 300 x 500). */
  readonly shape: readonly number[];
  /** Element type. */
  readonly dtype: RecordsType;
  /** Number of repeats. */
  readonly repeat: number;
  /** Parent of the scratch directory (default: the current directory). */
  readonly dir?: string;
  /** Data seed. */
  readonly seed: number;
  /** Each backend's options (netCDF variant, fill ...), by backend name. */
  readonly backendOptions?: ReadonlyMap<string, OptionValues>;
  /** Progress and notes on stderr. */
  readonly progress?: Progress;
  /** Under MPI, rank r reads the file of rank (r + reorder) mod ranks (default 0: its own). */
  readonly reorder?: number;
  /** When the write phase fsyncs (default `end`). */
  readonly fsync?: FsyncPolicy;
  /** `--bs` / `--direct` (native framings; peers refuse). With O_DIRECT no cache drop is made. */
  readonly transfer?: Transfer;
  /**
   * Under MPI, `per-rank` (the default: a file per rank) or `shared` (one file per target, rank
   * r writing records r x R .. (r + 1) x R - 1, lib/mpi/shared.ts).
   */
  readonly layout?: "per-rank" | "shared";
  /** Called on every rank after each write phase with the file written and its backend (tests). */
  readonly afterWrite?: (path: string, backend: string) => void;
}

/** One measured phase of one target and repeat. */
export interface RecordsRun {
  /** Backend name. */
  readonly framing: string;
  /** Byte order as requested. */
  readonly endian: EndianOption;
  /** `write` or `read`. */
  readonly phase: "write" | "read";
  /** 1-based repeat. */
  readonly repeat: number;
  /** Payload bytes (records x record bytes). */
  readonly bytes: number;
  /** File size after writing. */
  readonly fileBytes: number;
  /** Fraction of the file still cached after the drop (read phase; 0 for write). */
  readonly residentAfterDrop: number;
  /** The write's fsync policy (the read rows carry the policy their file was written with). */
  readonly fsync: FsyncPolicy;
  /** Time and CPU. */
  readonly sample: PhaseSample;
  /**
   * Read phase from a dropped cache: whether its cold read can be trusted (`cold_ok`); absent
   * for writes and O_DIRECT reads.
   */
  readonly coldOk?: boolean;
  /** Why the phase failed (its numbers are then empty). */
  readonly error?: string;
}

/** The byte order an endian option resolves to on this machine. */
export function resolveOrder(e: EndianOption): ByteOrder {
  return e === "native" ? NATIVE_ORDER : e;
}

/**
 * The one byte order every backend of `backends` can write, for a run whose backends the user
 * named without `--endian`: native when all write it, else the first of big and little that
 * all write (netCDF classic through the library is big-endian only), else native (then each
 * backend that cannot is measured in its own order, with a note: {@link recordsTargets}).
 */
export function commonOrder(backends: readonly Backend[]): EndianOption {
  const all = (o: ByteOrder) => backends.every((b) => b.orders.includes(o));
  if (all(NATIVE_ORDER)) return "native";
  return (["big", "little"] as const).find(all) ?? "native";
}

/**
 * Pairs every backend with every requested byte order it can write; a backend that offers none
 * of them is measured in its own order(s), with a note. netCDF classic, for one, is big-endian only.
 */
export function recordsTargets(
  backends: readonly Backend[],
  orders: readonly EndianOption[] | ((framing: string) => readonly EndianOption[]),
  note: (text: string) => void = () => {},
): RecordsTarget[] {
  const out: RecordsTarget[] = [];
  for (const backend of backends) {
    const endians = typeof orders === "function" ? orders(backend.name) : orders;
    const seen = new Set<ByteOrder>();
    const ok: EndianOption[] = [];
    const skipped: EndianOption[] = [];
    for (const e of endians) {
      const order = resolveOrder(e);
      if (!backend.orders.includes(order)) skipped.push(e);
      else if (!seen.has(order)) {
        seen.add(order);
        ok.push(e);
      }
    }
    if (ok.length === 0) {
      const own = backend.orders.map((o) => (o === NATIVE_ORDER ? "native" : o));
      note(
        `${backend.name} writes ${
          backend.orders.join(" or ")
        }-endian data only; measuring --endian ${own.join(",")} instead of ${skipped.join(",")}`,
      );
      for (const o of backend.orders) {
        out.push({ backend, endian: o === NATIVE_ORDER ? "native" : o });
      }
      continue;
    }
    if (skipped.length > 0) {
      note(
        `${backend.name} writes ${
          backend.orders.join(" or ")
        }-endian data only; skipping --endian ${skipped.join(",")}`,
      );
    }
    for (const e of ok) out.push({ backend, endian: e });
  }
  return out;
}

/** The records of the workload: one shared array, element 0 stamped with the record number. */
export class RecordFrames {
  /** Number of records. */
  readonly records: number;
  /** Shape of one record. */
  readonly recordShape: readonly number[];
  /** Bytes of one record. */
  readonly recordBytes: number;
  readonly #data: TypedArray;
  readonly #frame: Frame;

  /** `rank` (an MPI rank, default 0) makes each rank's data differ; rank 0's is the serial data. */
  constructor(shape: readonly number[], dtype: RecordsType, seed: number, rank = 0) {
    if (shape.length < 1) {
      throw new UsageError("records: the shape needs at least the record count");
    }
    this.records = shape[0]!;
    this.recordShape = shape.slice(1);
    const n = this.recordShape.reduce((a, b) => a * b, 1);
    this.recordBytes = n * DTYPE_SIZE[dtype];
    const rng = new Rng(seed ^ 0x5eed0003 ^ Math.imul(rank, 0x9e3779b1));
    this.#data = recordData(dtype, n, rng);
    this.#frame = {
      step: 0,
      chunks: [{ name: "data", dtype, shape: this.recordShape, data: this.#data }],
    };
  }

  /** What every frame holds. */
  get layout(): readonly ChunkLayout[] {
    return this.#frame.chunks.map(({ name, dtype, shape }) => ({ name, dtype, shape }));
  }

  /** Record r (the array is shared: valid until the next call). */
  frame(r: number): Frame {
    const data = this.#data;
    if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[0] = BigInt(r);
    else data[0] = r; // integer types keep r modulo their range
    return { step: r, chunks: this.#frame.chunks };
  }
}

/** A record's seeded values: floats in [0, 1), integers from random bytes. */
function recordData(dtype: RecordsType, n: number, rng: Rng): TypedArray {
  if (dtype === "float32") return fillRandom(new Float32Array(n), rng);
  if (dtype === "float64") return fillRandom(new Float64Array(n), rng);
  const bytes = n * DTYPE_SIZE[dtype];
  const buffer = new ArrayBuffer(Math.ceil(bytes / 4) * 4);
  const words = new Uint32Array(buffer);
  for (let i = 0; i < words.length; i++) words[i] = rng.nextU32();
  return typedArray(dtype, n, buffer);
}

function label(t: RecordsTarget): string {
  return `${t.backend.name} ${t.endian}`;
}

/**
 * Runs the workload; calls `onRun` as each phase is measured and returns every run.
 *
 * Long (about 200 lines) on purpose: it is the seed's protocol read top to bottom (per repeat and
 * target: write every record with its fsync, drop, read and verify every record), each phase
 * fenced under MPI, in the order the numbers depend on.
 */
export async function runRecords(
  options: RecordsOptions,
  onRun: (run: RecordsRun) => void = () => {},
): Promise<RecordsRun[]> {
  const w = world();
  const fsync = options.fsync ?? "end";
  const readRank = (w.rank + (options.reorder ?? 0)) % w.size;
  const frames = new RecordFrames(options.shape, options.dtype, options.seed, w.rank);
  const readFrames = readRank === w.rank
    ? frames
    : new RecordFrames(options.shape, options.dtype, options.seed, readRank);
  const bytes = frames.records * frames.recordBytes;
  // --layout shared: one file per target, rank r's records are r x R .. (r + 1) x R - 1
  const shared = options.layout === "shared" && w.size > 1;
  const readBase = shared ? readRank * frames.records : 0;
  // A shared file's record g: the layout follows from the records' shape alone, so every rank
  // lays out every rank's records with its own data and writes its own; under --direct a rank
  // writes the pages it owns whole, a few bytes of them from its neighbours' records, which are
  // then theirs (lib/mpi/shared.ts)
  let other: { rank: number; frames: RecordFrames } | undefined;
  const framesOf = (rank: number): RecordFrames => {
    if (rank === w.rank) return frames;
    if (rank === readRank) return readFrames;
    if (other?.rank !== rank) {
      other = { rank, frames: new RecordFrames(options.shape, options.dtype, options.seed, rank) };
    }
    return other.frames;
  };
  const sharedRecord = options.transfer?.direct
    ? (g: number) => framesOf(Math.floor(g / frames.records)).frame(g)
    : (g: number) => frames.frame(g);
  const p = options.progress;
  const transfer = options.transfer;
  const runs: RecordsRun[] = [];
  let index = 0;
  const cold = new ColdReads(options.dir ?? ".", (text) => p?.note(text));
  const readsOverlap = readOverlap(transfer, undefined);
  if (readsOverlap.note !== undefined) p?.note(readsOverlap.note);
  const overlap = readsOverlap.mode !== "none";
  await withScratchDir(options.dir, async (dir) => {
    const fs = statfs(dir);
    // every rank's file may be on this file system
    if (fs.availableBytes < (bytes * 1.05 + (64 << 20)) * w.size) {
      throw new UsageError(
        `records: ${bytes} bytes per file but only ${fs.availableBytes} bytes free in ${
          options.dir ?? "."
        }; ` +
          "use a smaller --shape or another --dir",
      );
    }
    if (fs.inMemory) p?.note(`${dir} is on ${fs.typeName}: reads come from memory, not a disk`);
    for (let repeat = 1; repeat <= options.repeat; repeat++) {
      for (const t of options.targets) {
        const fileOf = (rank: number) =>
          `${dir}/records.${t.backend.name}.${t.endian}${
            w.size === 1 ? "" : shared ? ".shared" : `.r${rank}`
          }`;
        const writer = !shared || w.rank === 0;
        const path = fileOf(w.rank);
        const readPath = fileOf(readRank);
        const again = options.repeat > 1 ? ` repeat ${repeat}/${options.repeat}` : "";
        p?.begin(`${label(t)}${again}`, {
          index: ++index,
          count: options.repeat * options.targets.length,
          phaseBytes: { write: bytes, read: bytes },
        });
        let phase: "write" | "read" = "write";
        let fileBytes = 0;
        try {
          // Write: open, every record, fsync, close.
          const backendOptions = options.backendOptions?.get(t.backend.name);
          const sink = {
            create: "truncate",
            endian: t.endian,
            fsync,
            backendOptions,
            transfer,
          } as const;
          // the shared file fsyncs at its end or not at all (the command refuses --fsync each)
          const sharedSink = {
            endian: t.endian,
            fsync: fsync !== "none",
            backendOptions,
            transfer,
          };
          const progress = (r: number) => {
            if ((r & 15) === 0) p?.update(r / frames.records, "write");
          };
          const plan = shared
            ? await fencedPhase(
              "plan",
              () =>
                planSharedFile(
                  sharedFraming(t.backend),
                  sharedSink,
                  sharedPart(frames.records),
                  sharedRecord,
                ),
            )
            : undefined;
          startAudit();
          const written = await fencedPhase("write", async () => {
            const wm = startMeter("write");
            if (plan) {
              await writeSharedFrames(
                sharedFraming(t.backend),
                path,
                sharedSink,
                plan,
                sharedRecord,
                progress,
              );
            } else {
              await writeFrames(
                t.backend,
                path,
                sink,
                frames.records,
                (r) => frames.frame(r),
                progress,
              );
            }
            const ws = wm.stop();
            // a shared file is counted once, on rank 0, so the sum over ranks is its size
            return { ws, fileBytes: writer ? (await Deno.stat(path)).size : 0 };
          });
          fileBytes = written.fileBytes;
          options.afterWrite?.(path, t.backend.name);
          const write: RecordsRun = attachAudit({
            framing: t.backend.name,
            endian: t.endian,
            phase: "write",
            repeat,
            bytes,
            fileBytes,
            residentAfterDrop: 0,
            fsync,
            sample: written.ws,
          }, finishAudit());
          runs.push(write);
          onRun(write);

          // Read from a cold cache: open, every record (verified), close.
          phase = "read";
          startAudit();
          // O_DIRECT reads bypass the page cache: no drop, only the residency measured
          const drop = await fencedPhase(
            "drop",
            () =>
              transfer?.direct
                ? { seconds: 0, residentAfter: residency(readPath) }
                // mutant: records-cold-drop
                : dropCache(readPath),
          );
          const rs = await fencedPhase("read", async () => {
            const rm = startMeter("read");
            const source = t.backend.openReader(readPath, { layout: readFrames.layout, transfer });
            try {
              const total = shared ? frames.records * w.size : frames.records;
              if (source.frameCount !== total) {
                throw new VerifyError(
                  `${readPath}: ${source.frameCount} records read back, ${total} written`,
                );
              }
              // with --direct, record r + 1's read is in flight while record r is verified
              // (native AIO, lib/backends/overlap.ts); else one after the other
              const order = Uint32Array.from({ length: frames.records }, (_, r) => readBase + r);
              await readFramesOverlapped(order, nativeReads(source), (g, chunks, r) => {
                verifyFrame(readPath, g, readFrames.frame(g).chunks, chunks);
                if ((r & 15) !== 0) return undefined;
                p?.update(r / frames.records, "read");
                // mutant: records-direct-aio
                return signalPoint();
              }, overlap);
            } finally {
              source.close();
            }
            return rm.stop();
          });
          const measured: RecordsRun = {
            framing: t.backend.name,
            endian: t.endian,
            phase: "read",
            repeat,
            bytes,
            fileBytes,
            // mutant: records-resident-after-drop
            residentAfterDrop: drop.residentAfter,
            fsync,
            sample: rs,
          };
          const judged: { cold_ok?: boolean | "" } = {};
          // mutant: records-cold-ok-judge
          cold.judge(judged, transfer?.direct ? "direct" : "cold", {
            fsType: fs.type,
            residentAfterDrop: measured.residentAfterDrop,
            readBytes: bytes,
            deviceReadBytes: rs.devReadBytes,
          });
          const read: RecordsRun = attachAudit({
            ...measured,
            ...(typeof judged.cold_ok === "boolean" ? { coldOk: judged.cold_ok } : {}),
          }, finishAudit());
          runs.push(read);
          onRun(read);
        } catch (e) {
          // A target the backend cannot hold: the failed phase's row says why and the sweep goes
          // on (not under MPI, where the ranks meet in every phase).
          const why = cellError(e);
          if (why === null || w.size > 1) throw e;
          finishAudit();
          const failed: RecordsRun = {
            framing: t.backend.name,
            endian: t.endian,
            phase,
            repeat,
            bytes,
            fileBytes,
            residentAfterDrop: 0,
            fsync,
            sample: EMPTY_SAMPLE,
            error: why,
          };
          runs.push(failed);
          onRun(failed);
          p?.clear();
          await Deno.remove(path).catch(() => {});
          continue;
        }
        p?.clear();
        // fenced: every rank has read (--reorder reads another rank's file) before files go,
        // and no rank is still removing when rank 0 removes the scratch directory
        await fencedPhase("remove", () => writer ? Deno.remove(path) : undefined);
      }
    }
  }, rankScratchShare());
  return runs;
}

const MIB = 2 ** 20;

/** The result row of one phase (CSV columns; JSON rows add file_bytes, device bytes, residency). */
export function recordsRow(
  run: RecordsRun,
  shape: readonly number[],
  transfer?: Transfer,
): Row {
  if (run.error !== undefined) {
    const { framing, endian, phase, bytes, error, fsync } = run;
    return {
      framing,
      endian,
      phase,
      shape: shape.join("x"),
      bytes,
      repeat: run.repeat,
      fsync,
      cold_ok: "",
      ...transferColumns(transfer),
      stat: "run",
      error,
    };
  }
  const s = run.sample;
  return attachAudit({
    framing: run.framing,
    endian: run.endian,
    phase: run.phase,
    shape: shape.join("x"),
    bytes: run.bytes,
    wall_s: s.wallS,
    cpu_s: s.userS + s.sysS,
    user_s: s.userS,
    sys_s: s.sysS,
    MiBps: run.bytes / MIB / s.wallS,
    repeat: run.repeat,
    file_bytes: run.fileBytes,
    dev_read_bytes: s.devReadBytes,
    dev_write_bytes: s.devWriteBytes,
    resident_after_drop: run.residentAfterDrop,
    fsync: run.fsync,
    cold_ok: run.coldOk ?? "",
    ...transferColumns(transfer),
    stat: "run",
    error: "",
  }, auditOf(run));
}

/**
 * The seed's text layout: at the end, per (framing, endian, phase), writes first, `About to write
 * <framing> file (<endian>), record by record: x X y Y z Z...` (or `About to read ...`), then
 * `avg CPU time = %7.2f secs.` and `avg User Time = W secs.`, means over the repeats (the seed's
 * "User Time" is wall clock time; here with two decimals). Rows themselves print nothing.
 */
export function seedRecordsRenderer(shape: readonly number[]): TableRenderer {
  const axes = ["x", "y", "z", "w", "v"];
  const dims = shape.map((d, i) => `${axes[i] ?? `d${i}`} ${d}`).join(" ");
  const groups = new Map<string, Row[]>();
  return {
    head: () => "",
    row(row: Row): string {
      if (row["stat"] !== "run" || row["error"]) return "";
      const k = `${row["phase"] === "read" ? 1 : 0}\u0000${row["framing"]}\u0000${row["endian"]}`;
      groups.get(k)?.push(row) ?? groups.set(k, [row]);
      return "";
    },
    foot(): string {
      // Writes first, then reads (the seed's order), each in the order measured.
      const keys = [...groups.keys()].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0));
      return keys.map((k) => {
        const rs = groups.get(k)!;
        const mean = (key: string) => rs.reduce((a, r) => a + Number(r[key]), 0) / rs.length;
        const first = rs[0]!;
        const what = `${first["framing"]} file (${first["endian"]}-endian)`;
        const head = first["phase"] === "write"
          ? `About to write ${what}, record by record: ${dims}...`
          : `About to read ${what}...`;
        return `${head}\navg CPU time = ${mean("cpu_s").toFixed(2).padStart(7)} secs.\n` +
          `avg User Time = ${mean("wall_s").toFixed(2)} secs.\n\n`;
      }).join("");
    },
  };
}
