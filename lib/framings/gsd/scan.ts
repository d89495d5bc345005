/**
 * The used entries of a GSD index: counted at open as gsd 2.7's `gsd_open` counts them (a binary
 * search for the first empty slot that checks the entries it probes), and read whole at the first
 * lookup, every entry checked (in WebAssembly where it can, entries_wasm.ts) and kept as columns
 * ({@link EntryColumns}).
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteSource } from "../types.ts";
import { Added, EntryColumns, scannedLast, startScan } from "./entries.ts";
import { type EntryScanner, entryScanner, SCAN } from "./entries_wasm.ts";
import { ENTRY_BYTES } from "./format.ts";
import { failAt, type GsdHeader, readReusing } from "./header.ts";
import {
  checkEntryRun,
  entryFrame,
  entryLocation,
  limitsOf,
  nativeWords,
  type RunCheck,
  validEntry,
} from "./entry_check.ts";

/**
 * Slots read in one pread to count the entries (64 KiB): a whole index block up to this size; in a
 * larger one, the search's range once it is this narrow (its last levels, in memory).
 */
const LAST_SLOTS = 2048;
/** Slots read around each probe before the range is that narrow (4 KiB). */
const PROBE_SLOTS = 128;

/**
 * The buffer the count reads index slots into (made at the first open and kept for the process,
 * so an open allocates no buffer where its source reads into one): nothing of it outlives the open.
 */
const scratch: { slots?: Uint8Array } = {};

/** An open GSD file's index: what counting and reading its entries read and check against. */
export interface IndexFile {
  /** The file. */
  readonly source: ByteSource;
  /** Its header. */
  readonly header: GsdHeader;
  /** Names in its name list. */
  readonly nameCount: number;
  /** Most index bytes read at once when the entries are read whole (whole entries). */
  readonly blockBytes: number;
}

/**
 * gsd 2.7's count of the used entries: none when slot 0 is empty, else a binary search for the
 * first slot with location 0 that checks each used slot it probes (and slot 0): valid, and a
 * frame not below the frame of the search's left bound. The slots come from the file's `head`
 * when the block lies in it (a fresh file's), else from one read of a block up to 64 KiB, else
 * from reads of 128 slots (4 KiB) around the probes until the search's range is 2048 slots
 * (64 KiB) or narrower, then one read of that range: log2(slots) - 9 reads (3 for the table's
 * 8192 slots at N = 32^2, whose first probes each cost a pread from JavaScript that is not yet
 * optimised, more than the bytes). Returns the count and the last used entry's frame.
 * A bad probe throws the FormatError of the first bad entry.
 */
export function countEntries(
  file: IndexFile,
  head: Uint8Array,
): { used: number; lastFrame: number } {
  const { source, header } = file;
  const { indexLocation: at, indexSlots: slots } = header;
  const size = source.size;
  const bad = failAt(source.path);
  if (slots === 0) bad(16, "the index block has 0 slots");
  const bytes = slots * ENTRY_BYTES;
  if (at + bytes > size) {
    bad(
      8,
      `the index block [${at}, ${at + bytes}) ends past the end of the file (${size} bytes)`,
    );
  }
  // Slots are read a window at a time (the search's last levels in one window), or the
  // whole block in one read when it is small; a fresh file's block is in the head already.
  let window: Uint32Array | null = at + bytes <= head.length
    ? nativeWords(head.subarray(at, at + bytes))
    : null;
  let from = 0, span = window === null ? 0 : slots;
  /** Reads slots [first, first + count) as the window. */
  const load = (first: number, count: number): void => {
    from = first;
    span = count;
    scratch.slots ??= new Uint8Array(LAST_SLOTS * ENTRY_BYTES);
    window = nativeWords(
      readReusing(source, at + first * ENTRY_BYTES, count * ENTRY_BYTES, scratch.slots),
    );
  };
  const slot = (i: number): Uint32Array => {
    if (window === null || i < from || i >= from + span) {
      const per = slots <= LAST_SLOTS ? slots : PROBE_SLOTS;
      load(i - (i % per), Math.min(per, slots - i + (i % per)));
    }
    return window!.subarray((i - from) * 8, (i - from) * 8 + 8);
  };
  const check = limitsOf({ header, nameCount: file.nameCount, size });
  const first = slot(0);
  if (entryLocation(first, 0) === 0) return { used: 0, lastFrame: 0 };
  let fault = !validEntry(first, 0, check);
  let lo = 0, hi = slots;
  let loFrame = entryFrame(first, 0);
  while (hi - lo > 1) {
    // the last levels: the range in one read, unless the window holds it already
    if (hi - lo <= LAST_SLOTS && !(lo + 1 >= from && hi <= from + span)) {
      load(lo + 1, hi - lo - 1);
    }
    const mid = Math.floor((lo + hi) / 2);
    const e = slot(mid);
    if (entryLocation(e, 0) === 0) {
      hi = mid;
      continue;
    }
    const frame = entryFrame(e, 0);
    if (!validEntry(e, 0, check) || frame < loFrame) fault = true;
    lo = mid;
    loFrame = frame;
  }
  if (fault) {
    // A probed entry is bad: the first bad entry of all, named as the full check names it.
    scanEntries(file, hi, null);
    bad(at, "a used index entry is not valid (gsd_open's search finds a bad entry)");
  }
  return { used: hi, lastFrame: loFrame };
}

/**
 * Reads the first `used` entries in order, `blockBytes` at a time (into one reused buffer
 * where the source reads into one), checks every one ({@link checkEntryRun}: the first bad
 * one throws) and adds them to `columns`; when their kinds stop repeating, keeps them whole.
 */
export function scanEntries(file: IndexFile, used: number, columns: EntryColumns | null): void {
  const { source, header } = file;
  const at = header.indexLocation;
  const per = file.blockBytes / ENTRY_BYTES;
  const run: RunCheck = { header, nameCount: file.nameCount, source, prevFrame: 0, prevId: 0 };
  const sc = columns === null ? null : entryScanner();
  if (sc !== null) return scanWasm(file, used, columns!, run, sc);
  const reuse = source.readInto !== undefined && NATIVE_ORDER === "little";
  const buf = reuse ? new Uint32Array(Math.min(per, used) * 8) : null;
  let whole = columns === null;
  for (let base = 0; base < used; base += per) {
    const n = Math.min(per, used - base);
    const offset = at + base * ENTRY_BYTES;
    let words: Uint32Array;
    if (buf !== null) {
      const bytes = new Uint8Array(buf.buffer, 0, n * ENTRY_BYTES);
      // short only if the file was cut since the open: read again for the ShortReadError
      if (source.readInto!(bytes, offset) < bytes.length) source.read(offset, bytes.length);
      words = buf.subarray(0, n * 8);
    } else {
      words = nativeWords(source.read(offset, n * ENTRY_BYTES));
    }
    checkEntryRun(words, base, run);
    if (!whole && !columns!.add(words)) whole = true;
  }
  if (columns !== null) {
    if (whole) columns.keepWhole(nativeWords(source.read(at, used * ENTRY_BYTES)).slice());
    columns.finish();
  }
}

/**
 * {@link scanEntries} through the WebAssembly check (entries_wasm.ts): the entries read
 * `blockBytes` at a time, straight into the module's memory where the source reads into a
 * buffer (at most its block of 2048 entries, 64 KiB, a read), else in one read copied in; each
 * block of the module's checked and added in one call ({@link EntryColumns.addScanned}). A bad
 * entry is named by {@link checkEntryRun}, and entries whose kinds stop repeating are kept
 * whole, as there.
 */
function scanWasm(
  file: IndexFile,
  used: number,
  columns: EntryColumns,
  run: RunCheck,
  sc: EntryScanner,
): void {
  const source = file.source;
  const at = file.header.indexLocation;
  const per = file.blockBytes / ENTRY_BYTES;
  const limits = limitsOf({ header: file.header, nameCount: file.nameCount, size: source.size });
  startScan(sc, limits);
  let whole = false;
  for (let base = 0; base < used; base += per) {
    const n = Math.min(per, used - base);
    const read = source.readInto === undefined
      ? source.read(at + base * ENTRY_BYTES, n * ENTRY_BYTES)
      : null;
    for (let first = base; first < base + n; first += SCAN.BLOCK_ENTRIES) {
      const count = Math.min(SCAN.BLOCK_ENTRIES, base + n - first);
      const offset = at + first * ENTRY_BYTES;
      const bytes = sc.u8.subarray(SCAN.BLOCK, SCAN.BLOCK + count * ENTRY_BYTES);
      if (read !== null) {
        bytes.set(
          read.subarray((first - base) * ENTRY_BYTES, (first - base + count) * ENTRY_BYTES),
        );
      } else if (source.readInto!(bytes, offset) < bytes.length) {
        // short only if the file was cut since the open: read again for the ShortReadError
        source.read(offset, bytes.length);
      }
      const words = sc.u32.subarray(SCAN.BLOCK / 4, SCAN.BLOCK / 4 + count * 8);
      if (whole) {
        checkEntryRun(words, first, run);
        continue;
      }
      const added = columns.addScanned(sc, count, limits);
      if (added === Added.All) {
        const last = scannedLast(sc);
        run.prevFrame = last.frame;
        run.prevId = last.id;
        continue;
      }
      // a bad entry (named here), or kinds that stopped repeating: this block all checked here
      checkEntryRun(words, first, run);
      if (added === Added.Bad) {
        throw new Error(`${source.path}: gsd index entries ${first}.. failed one check only`);
      }
      whole = true;
    }
  }
  if (whole) columns.keepWhole(nativeWords(source.read(at, used * ENTRY_BYTES)).slice());
  columns.finish();
}
