/**
 * The GSD table (gsd's scripts/benchmark-hoomd.py), generalised over backends and made honest
 * without root: per (size, N) write all frames with fsync, drop the file from the page cache,
 * time the open, drop again (an f77 or IEEEIO open scans the file), read a 0.25 GiB sample in
 * order, drop again, read it in a seeded random order;
 * every frame read is checked against what was written.
 * @module
 */
import { rankRows } from "../../mpi/aggregate.ts";
import { world } from "../../mpi/world.ts";
import type { Row } from "../../report/row.ts";
import { audited } from "../../sys/audit.ts";
import { addMetadataColumns } from "../metadata.ts";
import { formatCount, formatSize } from "../../report/units.ts";
import { statfs } from "../../sys/libc.ts";
import { type FioResult } from "../../baselines/fio.ts";
import { backendOrder, CellFailures } from "../cells.ts";
import { cacheState, ColdReads, readOverlap, transferColumns } from "../transfer.ts";
import { type PhaseBeside, type TableOptions, tableSizing } from "./options.ts";
import { TABLE_AGGREGATE } from "./columns.ts";
import { runTableCell } from "./cell.ts";
import { coldEvidence } from "../transfer.ts";
import { addFioColumns, besideFio } from "./fio.ts";
import { addIoRates } from "./io_rates.ts";
import { warmUpBackends } from "./warm_up.ts";
import type { Backend } from "../../backends/backend.ts";
import { flagsAsBooleans } from "../columns.ts";
export {
  type BesidePhase,
  BYTES_PER_PARTICLE,
  type PhaseBeside,
  READ_SAMPLE_BYTES,
  type TableOptions,
  type TableSizing,
  tableSizing,
} from "./options.ts";
export {
  TABLE_AGGREGATE,
  TABLE_CHART,
  TABLE_COLUMN_DOCS,
  TABLE_COLUMNS,
  TABLE_FIO_COLUMN_DOCS,
  TABLE_HUMAN_COLUMNS,
  TABLE_KEYS,
  TABLE_RANK_COLUMNS,
  tableColumnDocs,
} from "./columns.ts";
export { TableFrames } from "./frames.ts";
export { runTableCell } from "./cell.ts";
export { fioFirst } from "./fio.ts";
export { backendOrder } from "../cells.ts";

/** What a failed cell's row says: the columns that name the cell. */
function cellIdentity(
  options: TableOptions,
  framing: string,
  size: number,
  n: number,
  rep: number,
): Row {
  return {
    framing,
    size_bytes: size,
    N: n,
    repeat: rep,
    seed: options.seed,
    cache: cacheState(options.transfer, options.cache),
    fsync: options.fsync ?? "end",
    ...transferColumns(options.transfer),
    stat: "run",
  };
}

/** Shows which cell (`index` of `count`) is measured on the progress line. */
function beginCell(
  options: TableOptions,
  backend: Backend,
  size: number,
  n: number,
  rep: number,
  at: { readonly index: number; readonly count: number },
): void {
  const sizing = tableSizing(size, n, options.sampleBytes);
  const again = options.repeat > 1 ? ` repeat ${rep}/${options.repeat}` : "";
  const beside = options.baseline === "fio" ? " (and fio beside it)" : "";
  options.progress.begin(
    `${backend.name} ${formatSize(size)} N=${formatCount(n)}${again}${beside}`,
    {
      ...at,
      phaseBytes: {
        "warm-up": sizing.dataBytes,
        write: sizing.dataBytes,
        read: sizing.readBytes,
        random: sizing.readBytes,
      },
    },
  );
}

/**
 * The row of one cell as `backend` measures it: a program peer in its own process (its row's
 * flags made booleans), a backend in-process with `pairs`, fio's phases beside its own.
 */
async function measureWith(
  backend: Backend,
  size: number,
  n: number,
  rep: number,
  options: TableOptions,
  pairs?: PhaseBeside,
): Promise<Row> {
  const measure = backend.measureTableCell;
  if (measure) {
    return flagsAsBooleans(
      await measure({
        size,
        n,
        repeat: rep,
        dir: options.dir,
        seed: options.seed,
        sampleBytes: options.sampleBytes,
        warmup: options.warmup,
        cache: options.cache,
        transfer: options.transfer,
      }),
    );
  }
  // this backend's byte order (`--endian hdf4=big`)
  return await runTableCell(backend, size, n, rep, {
    ...options,
    endian: options.endianOf?.(backend.name) ?? options.endian,
    beside: pairs,
  });
}

/**
 * Runs every cell: for each size and N, each repeat, and each backend in {@link backendOrder}
 * (the row's `order`), after an untimed warm-up of every backend's write and read path
 * (lib/workloads/table/warm_up.ts) inside the first cell; hands each row to `onRow` as it is measured and returns them all. A cell that fails gives a
 * row with an `error` column and the sweep goes on; CellsFailedError (exit code 1) at the end
 * when any did.
 */
export async function runTable(
  options: TableOptions,
  onRow: (row: Row) => void = () => {},
): Promise<Row[]> {
  const rows: Row[] = [];
  const cells = new CellFailures();
  const noted = new Set<string>();
  const noteOnce = (text: string) => {
    if (noted.has(text)) return;
    noted.add(text);
    options.progress.note(text);
  };
  const all = [...options.backends, ...options.peers ?? []];
  const fsType = statfs(options.dir ?? ".").type;
  const cold = new ColdReads(options.dir ?? ".", (text) => options.progress.note(text));
  if (options.overlap === undefined && all.some((b) => b.kind === "native")) {
    const note = readOverlap(options.transfer, undefined).note;
    if (note !== undefined) options.progress.note(note);
  }
  const count = options.sizes.length * options.ns.length * all.length * options.repeat;
  let index = 0;
  let warm = false;
  for (const size of options.sizes) {
    for (const n of options.ns) {
      const sizing = tableSizing(size, n, options.sampleBytes);
      for (let rep = 1; rep <= options.repeat; rep++) {
        for (const [place, backend] of backendOrder(all, rep).entries()) {
          beginCell(options, backend, size, n, rep, { index: ++index, count });
          // Under MPI a failing rank stops the run (its ranks meet in collective calls per cell).
          const measureCell = (pairs?: PhaseBeside) => {
            const run = async () => {
              // inside the first cell's audit trail, as an untimed stretch before its phases
              if (!warm) {
                warm = true;
                // mutant: table-warm-up
                await warmUpBackends(all, options);
              }
              return await measureWith(backend, size, n, rep, options, pairs);
            };
            const identity = {
              ...cellIdentity(options, backend.name, size, n, rep),
              order: place + 1,
            };
            return world().size > 1 ? audited(run) : cells.run(identity, () => audited(run));
          };
          let fio: FioResult | string | undefined;
          let row: Row;
          if (options.baseline === "fio") {
            const fioCell = {
              framing: backend.name,
              dataBytes: sizing.dataBytes,
              readBytes: sizing.readBytes,
              repeat: rep,
            };
            const peer = backend.measureTableCell !== undefined;
            [row, fio] = await besideFio(fioCell, n, options, noteOnce, peer, measureCell);
          } else row = await measureCell();
          if (row.error) options.progress.clear();
          else {
            row.order = place + 1;
            addIoRates(row);
            addMetadataColumns(row, backend.kind === "native");
            cold.judge(row, String(row.cache), coldEvidence(row, fsType));
            if (typeof fio === "string") {
              options.progress.note(`--baseline fio: ${fio}; this row's fio columns stay empty`);
            } else if (fio !== undefined) addFioColumns(row, fio);
          }
          for (const r of rankRows(row, TABLE_AGGREGATE, options.perRank ?? false)) {
            // the aggregate row's rates are its own (summed bytes over the slowest rank's time)
            if (!r.error) addIoRates(r);
            rows.push(r);
            onRow(r);
          }
        }
      }
    }
  }
  options.progress.clear();
  cells.finish();
  return rows;
}
