/**
 * `--baseline fio`: fio's session beside a table cell, with the same file size, block sizes,
 * direct flag, fsync policy and cache state, and the fio_* and efficiency_* columns it adds.
 * @module
 */
import type { Row } from "../../report/row.ts";
import { fioHugePagesRefused, type FioResult, FioSession } from "../../baselines/fio.ts";
import { cacheState, prepareCache } from "../transfer.ts";
import { DEFAULT_DIRECT_BS, fileSystemAlignment, transferAlignment } from "../../io/transfer.ts";
import { BYTES_PER_PARTICLE, type PhaseBeside, type TableOptions } from "./options.ts";
import { withScratchDir } from "../../io/scratch.ts";

interface FioBeside {
  readonly framing: string;
  readonly dataBytes: number;
  readonly readBytes: number;
  readonly repeat: number;
}

/**
 * fio's block sizes for a cell, bytes: each as our own calls of that phase are. `--bs` sets both;
 * else fio writes one frame per call (ours: a call per chunk) or, with --direct, --engine or
 * --iodepth above 1, 4 MiB (our staged writes, at most the file), and reads one frame per call
 * (with --direct rounded up to the alignment of its file, FioSession: ours read the aligned blocks
 * covering each frame).
 */
function fioBlocks(
  n: number,
  dataBytes: number,
  options: TableOptions,
): { write: number; read: number } {
  const t = options.transfer;
  // --bs: every call of ours is bs (reads past the frame asked); readAhead false: --direct alone
  if (t && t.bs > 0 && (t.readAhead ?? true)) return { write: t.bs, read: t.bs };
  const frame = BYTES_PER_PARTICLE * n;
  // writes at depth are staged in 4 MiB transfers as direct ones are (lib/backends/native_sink.ts)
  // mutant: fio-depth-write-block
  if (!(t?.direct ?? false) && options.queue === undefined) return { write: frame, read: frame };
  // fio's block is at most its file (ours is then one padded call); 4096 is a multiple of any
  // direct-I/O alignment of a file system with 4 KiB blocks
  const write = Math.min(DEFAULT_DIRECT_BS, Math.max(4096, Math.floor(dataBytes / 4096) * 4096));
  return { write, read: frame };
}

/**
 * fio's session beside a cell (`--baseline fio`): the same file size, block size, direct flag,
 * fsync policy and cache state, its file in `dir` (a scratch directory of its own).
 */
export function fioSession(
  dir: string,
  cell: FioBeside,
  n: number,
  options: TableOptions,
  note: (text: string) => void,
): FioSession {
  const cache = cacheState(options.transfer, options.cache);
  const blocks = fioBlocks(n, cell.dataBytes, options);
  const direct = options.transfer?.direct ?? false;
  const frameReads = direct && !(options.transfer?.readAhead ?? true);
  let hugePages = false;
  if (direct && (options.transfer?.hugePages ?? true)) {
    // fio's read block may be rounded up to a page of alignment: a page more is asked for
    const refused = fioHugePagesRefused(Math.max(blocks.write, blocks.read + 4096));
    if (refused === null) hugePages = true;
    else {
      note(
        `--baseline fio: fio's buffers are 4 KiB pages (malloc; ${refused}), ours 2 MiB huge ` +
          "pages: efficiency_* compares the two as they are; --no-huge-pages makes ours 4 KiB " +
          "pages too",
      );
    }
  }
  return new FioSession(
    {
      path: `${dir}/fio.${cell.framing}`,
      fileBytes: cell.dataBytes,
      readBytes: cell.readBytes,
      blockBytes: blocks.write,
      readBlockBytes: blocks.read,
      direct,
      fsync: options.fsync ?? "end",
      seed: options.seed + cell.repeat,
      cold: cache === "cold",
      hugePages,
      // our writes' and reads' engine and depth (native framings; peers refuse --iodepth)
      engine: options.queue?.engine,
      iodepth: options.queue?.depth,
    },
    (path) => prepareCache(path, cache),
    // mutant: fio-direct-read-align
    frameReads ? (path) => directReadAlignment(path) : undefined,
  );
}

/**
 * The alignment of our O_DIRECT frame reads of `path`, bytes (lib/io/transfer.ts transferAlignment:
 * pages, or the file system's larger alignment): fio's read block is rounded up to it, so that
 * its calls are the size of ours (a frame's covering blocks).
 */
function directReadAlignment(path: string): number {
  return transferAlignment(fileSystemAlignment(path), DEFAULT_DIRECT_BS).align;
}

/**
 * Adds the fio_* and efficiency_* columns of `fio` to a measured row (amended in place). The read
 * efficiencies compare fio's rates with the rates of our I/O calls alone (`read_io_MiBps`,
 * `random_io_MiBps`: lib/workloads/table/io_rates.ts, set before), since fio verifies nothing.
 */
export function addFioColumns(row: Row, fio: FioResult): void {
  row.fio_write_MiBps = fio.writeMiBps;
  row.fio_read_MiBps = fio.readMiBps;
  row.fio_random_MiBps = fio.randomMiBps;
  row.efficiency_write = Number(row.write_MiBps) / fio.writeMiBps;
  // mutant: fio-efficiency-io-rate
  row.efficiency_read = Number(row.read_io_MiBps) / fio.readMiBps;
  row.efficiency_random = Number(row.random_io_MiBps) / fio.randomMiBps;
  row.fio_bs_bytes = fio.readBlockBytes;
  row.fio_write_bs_bytes = fio.writeBlockBytes;
  row.fio_huge_pages = fio.hugePages;
}

/**
 * Whether fio's phases run just before ours in `repeat` (1-based): just after ours in odd
 * repeats, just before in even ones (ABBA), so a storage that slows down or speeds up over a
 * run favours neither side in the median.
 */
export function fioFirst(repeat: number): boolean {
  // mutant: fio-abba-pairing
  return repeat % 2 === 0;
}

/**
 * Measures a cell with fio's session beside it (`--baseline fio`), in a scratch directory of its
 * own: a program peer (`peer`) measures the cell in its own process, so fio's phases run all
 * before or all after it; a backend's cell runs each of fio's phases beside its own (`measure`
 * gets the pairs). Returns the cell's row and fio's result (or why fio gave none).
 */
export async function besideFio(
  cell: FioBeside,
  n: number,
  options: TableOptions,
  note: (text: string) => void,
  peer: boolean,
  measure: (pairs?: PhaseBeside) => Promise<Row>,
): Promise<readonly [Row, FioResult | string]> {
  return await withScratchDir(options.dir, async (dir) => {
    using session = fioSession(dir, cell, n, options, note);
    const pairs: PhaseBeside = {
      first: fioFirst(cell.repeat),
      run: (phase) => session.run(phase),
    };
    const allOf = async () => {
      for (const phase of ["write", "read", "random"] as const) await pairs.run(phase);
    };
    if (peer && pairs.first) await allOf();
    const row = await measure(peer ? undefined : pairs);
    if (peer && !pairs.first) await allOf();
    return [row, session.result()] as const;
  });
}
