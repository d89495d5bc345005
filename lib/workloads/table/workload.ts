/**
 * `sciobench table`: the GSD table (write, open, sequential and random read) over framings.
 * @module
 */
import { UsageError } from "../../core/errors.ts";
import { BACKENDS } from "../../backends/registry.ts";
import { exceededDatasetLimit, libraryName } from "../../backends/capabilities.ts";
import type { Backend, FsyncPolicy, MpiIoRun, QueueSpec } from "../../backends/backend.ts";
import { fsyncRefusal } from "../../backends/write.ts";
import { fioUnavailable } from "../../baselines/fio.ts";
import { warn } from "../../core/diagnostics.ts";
import { didYouMean } from "../../core/suggest.ts";
import { gsdTableRenderer } from "../../report/formats/seed.ts";
import { world } from "../../mpi/world.ts";
import { TABLE_QUICK, TABLE_SEED } from "../seeds.ts";
import { columnHelp } from "../../report/human.ts";
import {
  runTable,
  TABLE_AGGREGATE,
  TABLE_CHART,
  TABLE_HUMAN_COLUMNS,
  TABLE_KEYS,
  TABLE_RANK_COLUMNS,
  tableColumnDocs,
  tableSizing,
} from "./mod.ts";
import { formatCount, formatSize } from "../../report/units.ts";
import { parseChoice, parseCount, parseList, parseSeed } from "../../core/values.ts";
import { parseSize } from "../../core/sizes.ts";
import { EndianChoice, resolveBackends } from "../settings.ts";
import type { Transfer } from "../../io/transfer.ts";
import { queueColumns, readOverlap } from "../transfer.ts";
import {
  planForRanks,
  type PlannedFile,
  type PlannedRun,
  type RunPlan,
  type SkippedBackend,
  type Workload,
  type WorkloadHelp,
} from "../workload.ts";
import { checkMemory, checkScratchRoom } from "../checks.ts";
import type { FlagValues } from "../../cli/flags.ts";
import { rankColumnDocs } from "../columns.ts";
import {
  mpiIoOptions,
  parseCache,
  parseFsync,
  parseLayout,
  parseMpiIo,
  parseQueue,
  parseReorder,
  parseSegments,
  parseTransfer,
  repeatOption,
} from "../settings.ts";
import { checkSegments } from "../../mpi/shared.ts";

const HELP: WorkloadHelp = {
  title: "the GSD benchmark table (gsd's benchmark-hoomd.py), over backends",
  intro:
    `For each size, N and backend: write ceil(size / 28N) frames of position (N x 3 float32) and
orientation (N x 4 float32) with fsync inside the timing; drop the file from the page cache
(posix_fadvise, no root needed) and time the open; read a 0.25 GiB sample in order; drop again;
read it in a seeded random order. Every frame read is checked against what was written.

With no options it is the seed's experiment: gsd's own framing, and python3-gsd (gsd.hoomd) as a
peer where it is importable, at 128 MiB and 1 GiB, N = 32^2, 128^2, 1024^2, each file written
once untimed first.`,
  after:
    `List options accumulate when repeated (--framing gsd --framing raw runs both). Every option is
checked, and the disk and memory the largest cell needs, before anything is written.

Columns (CSV order; MiB = 2^20 bytes, as gsd prints them; fio_* and efficiency_* only with
--baseline fio):
${columnHelp(tableColumnDocs(true))}
With --repeat K > 1, each cell's K run rows (stat=run, repeat 1..K) are followed at the end by
five summary rows (stat=mean, median, stddev, min, max; repeat = runs summarised); on a
terminal (after the human table, else on stderr) each rate follows as mean ± sd (min … max), n,
and each backend's mean rates as a ratio to python-gsd's (else raw's, else the first backend's),
then the files written. Before the first cell every backend writes and reads a tiny file
untimed, and the backends' order alternates between repeats (A B, then B A; column order). A failed
cell leaves its measured columns empty and says why in error; the exit code is then 1.
Rates are MiB/s; random_ms is milliseconds per frame. write_s includes the fsyncs (--fsync);
write_s - write_sync_s is the time to the page cache with --fsync end.`,
};

/** The resolved settings of a table run (after defaults and `--quick`). */
interface TableSettings {
  readonly sizes: readonly number[];
  readonly ns: readonly number[];
  readonly repeat: number;
  readonly seed: number;
  readonly warmup: boolean;
  readonly sampleBytes: number;
  readonly cache: "cold" | "warm";
  readonly fsync: FsyncPolicy;
  readonly baseline: "fio" | undefined;
  readonly endian: EndianChoice;
  readonly backends: readonly Backend[];
  readonly peers: readonly string[];
  readonly skipped: readonly SkippedBackend[];
}

/**
 * The plan of a table run: every cell's file, the bytes written and read, and a warning for each
 * cell past a backend's limit on datasets in a file (one per chunk, two per frame).
 */
function tablePlan(t: TableSettings): RunPlan {
  const names = [...t.backends.map((b) => b.name), ...t.peers];
  const files: PlannedFile[] = [];
  const warnings: string[] = [];
  let writeBytes = 0;
  let readBytes = 0;
  for (const size of t.sizes) {
    for (const n of t.ns) {
      const sizing = tableSizing(size, n, t.sampleBytes);
      for (const name of names) {
        files.push({
          name: `table.${name} (size ${formatSize(size)}, N ${formatCount(n)})`,
          count: t.repeat * (t.warmup ? 2 : 1),
          bytes: sizing.dataBytes,
        });
        writeBytes += t.repeat * (t.warmup ? 2 : 1) * sizing.dataBytes;
        // the sample in order and at random, the warm cache's reads of the file before each,
        // and the warm-up's read back of the whole file
        readBytes += t.repeat *
          (2 * sizing.readBytes + (t.cache === "warm" ? 2 * sizing.dataBytes : 0) +
            (t.warmup ? sizing.dataBytes : 0));
        const backend = t.backends.find((b) => b.name === name);
        const limit = backend && exceededDatasetLimit(backend, 2 * sizing.frames);
        if (backend && limit) {
          warnings.push(
            `${name} at size ${formatSize(size)}, N ${formatCount(n)}: ${
              2 * sizing.frames
            } datasets (2 per frame) exceed ${libraryName(backend)}'s limit of ${limit.max} ` +
              `per file; that cell will fail (${limit.failure}) and the sweep goes on`,
          );
        }
      }
    }
  }
  return {
    command: "table",
    parameters: {
      framing: t.backends.map((b) => b.name),
      peer: t.peers,
      size: t.sizes.map(formatSize),
      size_bytes: t.sizes,
      n: t.ns.map(formatCount),
      N: t.ns,
      repeat: t.repeat,
      seed: t.seed,
      warmup: t.warmup,
      sample_bytes: t.sampleBytes,
      cache: t.cache,
      fsync: t.fsync,
      baseline: t.baseline ?? "none",
    },
    backends: [
      ...t.backends.map((b) => ({ name: b.name, endian: t.endian.of(b.name) })),
      ...t.peers.map((name) => ({ name })),
    ],
    skipped: t.skipped,
    files,
    writeBytes,
    readBytes,
    warnings,
  };
}

/** The sizes, particle counts, repeats, seed and sample of a table run, checked in this order. */
function tableCells(values: FlagValues<"table">) {
  const quick = values.quick;
  const sizes = parseList(values.size ?? (quick ? TABLE_QUICK.size : TABLE_SEED.size), "--size")
    .map((s) => parseSize(s, "--size"));
  const ns = parseList(values.n ?? (quick ? TABLE_QUICK.n : TABLE_SEED.n), "--n")
    .map((s) => parseCount(s, "--n"));
  const repeat = repeatOption(values.repeat, undefined);
  const seed = parseSeed(values.seed);
  checkMemory(
    4 * 28 * Math.max(...ns),
    `a frame of N = ${Math.max(...ns)} particles`,
    "use a smaller --n",
  );
  // a flag given with its opposite is refused before the sample and the backends are read
  if (values.overlap && values["no-overlap"]) {
    throw new UsageError("give --overlap or --no-overlap, not both");
  }
  if (values.warmup && values["no-warmup"]) {
    throw new UsageError("give --warmup or --no-warmup, not both");
  }
  const sampleBytes = parseSize(values.sample, "--sample");
  return { sizes, ns, repeat, seed, sampleBytes };
}

/** The backends and peers a table run measures, with the byte orders, cache state and fsync. */
interface TableBackends {
  readonly endian: EndianChoice;
  readonly run: readonly Backend[];
  readonly peers: readonly Backend[];
  readonly skipped: readonly SkippedBackend[];
  readonly notes: readonly string[];
  readonly cache: "cold" | "warm";
  readonly fsync: FsyncPolicy;
}

/**
 * The backends of `--framing` and the peers of `--peer`, or with neither the seed's: gsd, and
 * python3-gsd beside it where it is importable (not under MPI, where the peer program is one
 * process and the ranks' cells are collective, nor with a transfer size: a peer makes its own
 * system calls). UsageError when nothing is left to measure.
 */
function tableBackends(values: FlagValues<"table">): TableBackends {
  const endian = new EndianChoice(values.endian);
  const resolved = resolveBackends(values.framing ?? TABLE_SEED.framing);
  const skipped = [...resolved.skipped];
  const cache = parseCache(values.cache, values.direct);
  const notes: string[] = [];
  const sized = values.direct || values.bs !== undefined || values["transfer-size"] !== undefined ||
    values.iodepth !== undefined || values.engine !== undefined;
  const peerList = values.peer ??
    (values.framing === undefined && !values["no-peers"] && world().size === 1 && !sized
      ? TABLE_SEED.peer
      : undefined);
  if (values.peer !== undefined && values["no-peers"]) {
    throw new UsageError("give --peer or --no-peers, not both");
  }
  const fsync = parseFsync(values.fsync, resolved.run);
  const names = peerList === undefined ? [] : parseList(peerList, "--peer");
  const peers = tablePeers(names, values.peer !== undefined, fsync, skipped, notes);
  if (resolved.run.length === 0 && peers.length === 0) {
    throw new UsageError("no usable backend left to measure");
  }
  return { endian, run: resolved.run, peers, skipped, notes, cache, fsync };
}

/**
 * The peer programs named `names` that can run: an unknown name is refused, and so is any peer
 * under MPI; a peer that cannot honour `fsync` is refused when `asked` (the user named it), else
 * left out, as is one that is unavailable, each with its reason in `skipped`. A peer the bare
 * command adds is said in `notes`.
 */
function tablePeers(
  names: readonly string[],
  asked: boolean,
  fsync: FsyncPolicy,
  skipped: SkippedBackend[],
  notes: string[],
): Backend[] {
  const programs = BACKENDS.filter((b) => b.kind === "program");
  const peers: Backend[] = [];
  for (const name of names) {
    const peer = programs.find((b) => b.name === name);
    if (peer === undefined) {
      const known = programs.map((b) => b.name);
      throw new UsageError(
        `unknown peer '${name}'${didYouMean(name, known)}; known: ${known.join(", ")}`,
      );
    }
    if (world().size > 1) throw new UsageError("--peer does not run under MPI");
    // a peer asked for that cannot honour --fsync is refused; one the bare command adds is left out
    const refusal = fsyncRefusal(peer, fsync);
    if (refusal !== null && asked) throw new UsageError(refusal);
    const why = peer.unavailable() ?? refusal;
    if (why === null) {
      peers.push(peer);
      if (!asked) {
        notes.push(`added peer '${name}' (gsd.hoomd is importable; --no-peers leaves it out)`);
      }
    } else skipped.push({ name, reason: `peer '${name}': ${why}` });
  }
  return peers;
}

/** `--baseline` (fio, not under MPI) and `--layout`. */
function tableBaselineLayout(
  values: FlagValues<"table">,
  b: TableBackends,
): { baseline: "fio" | undefined; layout: "per-rank" | "shared" } {
  const baseline = values.baseline === undefined
    ? undefined
    : parseChoice(values.baseline, ["fio"] as const, "--baseline");
  if (baseline !== undefined && world().size > 1) {
    throw new UsageError("--baseline fio does not run under MPI (use fio's own MPI-free jobs)");
  }
  const layout = parseLayout(values.layout, b.run, b.fsync);
  return { baseline, layout };
}

/** Everything a checked table run needs beyond its settings. */
interface TableRunParts {
  readonly peers: readonly Backend[];
  readonly notes: readonly string[];
  readonly layout: "per-rank" | "shared";
  readonly segments: number;
  readonly transfer: Transfer | undefined;
  readonly overlap: ReturnType<typeof readOverlap>;
  readonly reorder: number;
  readonly mpiIo: MpiIoRun | undefined;
  readonly queue: QueueSpec | undefined;
}

/** The planned table run of `settings`: its output's shape, the meta's options, and its run. */
function tableRun(
  values: FlagValues<"table">,
  settings: TableSettings,
  plan: RunPlan,
  parts: TableRunParts,
): PlannedRun {
  const { sizes, ns, repeat, seed, sampleBytes, cache, fsync, baseline, endian } = settings;
  const { peers, layout, segments, transfer, overlap, reorder, mpiIo, queue } = parts;
  const run = settings.backends;
  const names = [...run, ...peers].map((b) => b.name);
  let fioMissing: string | null = null;
  return {
    plan,
    notes: parts.notes,
    dir: values.dir,
    columns: rankColumnDocs(
      tableColumnDocs(baseline !== undefined),
      TABLE_AGGREGATE,
      TABLE_RANK_COLUMNS,
    ),
    seed: gsdTableRenderer(names.length > 1),
    options: {
      framing: names,
      size: sizes,
      n: ns,
      repeat,
      seed,
      sample: sampleBytes,
      cache,
      fsync,
      baseline: baseline ?? "none",
      endian: run.map((b) => `${b.name}=${endian.of(b.name)}`),
      warmup: settings.warmup,
      bs: transfer?.bs ?? null,
      direct: transfer?.direct ?? false,
      ...queueColumns(queue),
      read_overlap: overlap.mode,
      dir: values.dir ?? ".",
      ...(world().size > 1 ? { reorder, per_rank: values["per-rank"], layout, segments } : {}),
      ...mpiIoOptions(mpiIo),
    },
    begin(): void {
      if (overlap.note !== undefined && run.some((b) => b.kind === "native")) {
        warn(overlap.note);
      }
      // fio missing: one line, and the run goes on with the fio columns empty
      fioMissing = baseline === "fio" ? fioUnavailable() : null;
      if (fioMissing !== null) {
        warn(`--baseline fio: ${fioMissing}; the fio_* and efficiency_* columns stay empty`);
      }
    },
    run: (add, progress) =>
      runTable(
        {
          backends: run,
          peers,
          cache: settings.cache,
          fsync,
          baseline: fioMissing === null ? baseline : undefined,
          sizes,
          ns,
          dir: values.dir,
          repeat,
          seed,
          warmup: settings.warmup,
          sampleBytes,
          endianOf: (name) => endian.of(name),
          progress,
          reorder,
          perRank: values["per-rank"],
          layout,
          segments,
          mpiIo,
          transfer,
          // mutant: table-cli-overlap
          overlap: overlap.mode !== "none",
          queue,
        },
        add,
      ),
  };
}

/** The `table` workload. */
export const tableWorkload: Workload<FlagValues<"table">> = {
  name: "table",
  summary: "the GSD table: write, open, read and random read per size, N and backend",
  help: HELP,
  flags: [],
  columns: tableColumnDocs(false),
  keys: TABLE_KEYS,
  aggregate: TABLE_AGGREGATE,
  human: TABLE_HUMAN_COLUMNS,
  chart: TABLE_CHART,
  seedLayout: "gsd's own reST table",
  plan(values): PlannedRun {
    const { sizes, ns, repeat, seed, sampleBytes } = tableCells(values);
    const b = tableBackends(values);
    const { baseline, layout } = tableBaselineLayout(values, b);
    const mpiIo = parseMpiIo(values, b.run);
    const settings: TableSettings = {
      sizes,
      ns,
      repeat,
      seed,
      warmup: !values["no-warmup"],
      sampleBytes,
      cache: b.cache,
      fsync: b.fsync,
      baseline,
      endian: b.endian,
      backends: b.run,
      peers: b.peers.map((p) => p.name),
      skipped: b.skipped,
    };
    // --overlap changes how native framings read; library and program peers read one frame at a time
    const serial = [...b.run, ...b.peers].filter((x) => x.kind !== "native");
    if (values.overlap && serial.length > 0) {
      const names = serial.map((x) => x.name).join(", ");
      warn(`--overlap: not for ${names} (peers read one frame after the other)`);
    }
    // every rank writes and reads what one rank's plan says (--layout shared: its part of one file)
    const plan = planForRanks(tablePlan(settings), world().size, layout === "shared");
    // every rank's files may share this file system
    checkScratchRoom(
      values.dir,
      Math.max(...sizes) * world().size,
      "the largest --size",
      "use a smaller --size or another --dir",
    );
    const transfer = parseTransfer(values, [...b.run, ...b.peers], values.dir);
    // frame k + 1's read in flight while frame k is verified: by default with --direct
    const overlap = readOverlap(transfer, values["no-overlap"] ? false : values.overlap);
    const queue = parseQueue(values, [...b.run, ...b.peers]);
    const reorder = parseReorder(values.reorder);
    const segments = parseSegments(values.segments, layout, b.run);
    for (const size of sizes) {
      for (const n of ns) checkSegments(tableSizing(size, n, sampleBytes).frames, segments);
    }
    return tableRun(values, settings, plan, {
      peers: b.peers,
      notes: b.notes,
      layout,
      segments,
      transfer,
      overlap,
      reorder,
      mpiIo,
      queue,
    });
  },
};
