/**
 * The Packman file (shared/seeds/001_*.txt): records of a seeded pattern of doubles, record i
 * ending in i; its writer, and one reader that checks every record as the seed's rd does.
 * @module
 */
import { VerifyError } from "../../core/errors.ts";
import { usableBackend } from "../../backends/registry.ts";
import type { OptionValues } from "../../framings/options.ts";
import type { ChunkLayout, EndianOption } from "../../framings/types.ts";
import type { Transfer } from "../../io/transfer.ts";
import type { Backend, QueueSpec, ReadChunk } from "../../backends/backend.ts";
import { bytesEqual, clockGettime } from "../../sys/libc.ts";
import { type AuditPhase, finishAudit, startAudit } from "../../sys/audit.ts";
import { startMeter } from "../../sys/meter.ts";
import { fillRandom, Rng } from "../pattern.ts";
import { removeStore, storeBytes } from "../../io/store.ts";

/** Name of the single chunk of every frame (Fortran's array `a`). */
const CHUNK = "a";

/** The layout of one frame of a Packman file: `length` doubles. */
export function packmanLayout(length: number): ChunkLayout[] {
  return [{ name: CHUNK, dtype: "float64", shape: [length] }];
}

/**
 * The seeded pattern of file `fileIndex`: `length` doubles in [0, 1); record i (1-based) is
 * this pattern with element `length` set to i.
 */
export function packmanPattern(length: number, seed: number, fileIndex: number): Float64Array {
  return fillRandom(new Float64Array(length), new Rng(seed * 1000003 + 7919 * (fileIndex + 1)));
}

/** Writes a Packman file with `backend`: `records` records of the pattern, record i ending in i. */
export function writePackmanFile(
  backend: Backend,
  path: string,
  o: {
    records: number;
    length: number;
    seed: number;
    fileIndex: number;
    endian: EndianOption;
    backendOptions: OptionValues;
    /** fsync before close returns (default true). */
    fsync?: boolean;
    /** `--bs` / `--direct`. */
    transfer?: Transfer;
  },
): void {
  const a = packmanPattern(o.length, o.seed, o.fileIndex);
  const sink = backend.openWriter(path, {
    create: "truncate",
    endian: o.endian,
    fsync: o.fsync ?? true ? "end" : "none",
    backendOptions: o.backendOptions,
    transfer: o.transfer,
  });
  try {
    for (let i = 1; i <= o.records; i++) {
      a[o.length - 1] = i;
      sink.writeFrame({
        step: i,
        chunks: [{ name: CHUNK, dtype: "float64", shape: [o.length], data: a }],
      });
    }
    sink.close();
  } catch (e) {
    sink.abort();
    throw e;
  }
}

/** What one reader process measured; printed by the reader as one JSON line. */
export interface ReaderReport {
  /** File the reader read. */
  readonly path: string;
  /** Bytes the reader read from the file (markers and headers included). */
  readonly bytes: number;
  /** Records read and checked. */
  readonly records: number;
  /** CLOCK_MONOTONIC at the start and end of the read (open to close), nanoseconds. */
  readonly t0Ns: number;
  readonly t1Ns: number;
  /** Wall time of the read, seconds. */
  readonly wallS: number;
  /** CPU of the read, seconds (getrusage of the reader process). */
  readonly userS: number;
  readonly sysS: number;
  /** Bytes the reader read from devices (ru_inblock x 512). */
  readonly devReadBytes: number;
  /** Notes from the decoder (e.g. ambiguous marker detection). */
  readonly warnings: readonly string[];
  /** The reader's own audit trail of its read (calls, offsets, its file), from lib/sys/audit.ts. */
  readonly audit?: AuditPhase;
}

/** Settings of one reader. */
export interface ReaderSettings {
  /** Backend name (a native framing or a peer). */
  readonly framing: string;
  readonly records: number;
  readonly length: number;
  readonly seed: number;
  /** Which file's pattern to expect (0 for the shared file). */
  readonly fileIndex: number;
  /** Byte order the file was written in, for formats that cannot tell (Fortran records). */
  readonly endian?: EndianOption;
  /** The backend's options (f77: marker), as it declares them. */
  readonly backendOptions: OptionValues;
  /** `--bs` / `--direct` of the reads. */
  readonly transfer?: Transfer;
  /** `--iodepth` / `--engine` of the reads (native framings); undefined: one at a time. */
  readonly queue?: QueueSpec;
}

/** Prepared state of a reader: the expected pattern is computed before the timed read. */
export interface PreparedReader {
  /** Reads and checks every record; times it. */
  run(): ReaderReport;
}

/**
 * Keeps first-use costs out of the timed read, as a compiled Fortran reader has none: touches the
 * buffers (page faults), binds the libc calls (memcmp, clocks, getrusage), and writes and reads
 * a two-record file of the same backend in the directory of `path` (compiles the decoder, loads a peer's
 * library). The file under test is not read, so a cold cache stays cold.
 */
function warmUpReader(
  backend: Backend,
  path: string,
  s: ReaderSettings,
  expected: Uint8Array,
): void {
  const buf = new Uint8Array(expected.length).fill(1);
  bytesEqual(buf, expected, buf.length);
  startMeter().stop();
  clockGettime();
  // Beside the file, under a name that is not the file's: a reader process opens only its file.
  const warm = `${path.slice(0, path.lastIndexOf("/") + 1)}.sciobench-warm-${Deno.pid}`;
  try {
    writePackmanFile(backend, warm, {
      records: 2,
      length: 2,
      seed: s.seed,
      fileIndex: s.fileIndex,
      endian: s.endian ?? "native",
      backendOptions: s.backendOptions,
      fsync: false,
      transfer: s.transfer,
    });
    const source = backend.openReader(warm, {
      layout: packmanLayout(2),
      endian: s.endian,
      backendOptions: s.backendOptions,
      transfer: s.transfer,
    });
    try {
      for (let f = 0; f < source.frameCount; f++) source.readFrame(f);
      // the queue's first use too (its system calls bound, its rings set up once)
      if (s.queue && source.readFramesQueued) {
        source.readFramesQueued(Uint32Array.of(0, 1), s.queue, () => {});
      }
    } finally {
      source.close();
    }
  } finally {
    try {
      removeStore(warm);
    } catch {
      // never written
    }
  }
}

/** Computes what a reader of `path` expects, so that `run()` only reads and checks. */
export function prepareReader(path: string, s: ReaderSettings): PreparedReader {
  const backend = usableBackend(s.framing);
  const expected = packmanPattern(s.length, s.seed, s.fileIndex);
  const expectedBytes = new Uint8Array(expected.buffer);
  const fileBytes = storeBytes(path); // a missing file fails here, before `ready`
  warmUpReader(backend, path, s, expectedBytes);
  return {
    run(): ReaderReport {
      startAudit();
      const meter = startMeter("read");
      const t0Ns = clockGettime();
      // mutant: readers-read-twice
      const source = backend.openReader(path, {
        layout: packmanLayout(s.length),
        endian: s.endian,
        backendOptions: s.backendOptions,
        transfer: s.transfer,
      });
      let warnings: readonly string[] = [];
      try {
        warnings = source.warnings;
        if (source.frameCount !== s.records) {
          throw new VerifyError(`${path}: ${source.frameCount} records, expected ${s.records}`);
        }
        const check = (f: number, chunks: readonly ReadChunk[]): void =>
          checkRecord(path, s, f, chunks, expected, expectedBytes);
        if (s.queue && source.readFramesQueued) {
          // --iodepth / --engine: up to the depth's reads in flight, each record checked as it
          // completes while the next are in flight
          let checked = 0;
          const order = Uint32Array.from({ length: s.records }, (_, f) => f);
          // mutant: readers-iodepth
          source.readFramesQueued(order, s.queue, (f, chunks) => {
            check(f, chunks);
            checked++;
          });
          if (checked !== s.records) {
            throw new VerifyError(`${path}: ${checked} of ${s.records} records read`);
          }
        } else {
          for (let f = 0; f < s.records; f++) check(f, source.readFrame(f));
        }
      } finally {
        source.close();
      }
      const t1Ns = clockGettime();
      const m = meter.stop();
      const audit = finishAudit()?.phases.find((p) => p.name === "read");
      return {
        path,
        bytes: source.bytesRead ?? fileBytes,
        records: s.records,
        t0Ns,
        t1Ns,
        wallS: (t1Ns - t0Ns) / 1e9,
        userS: m.userS,
        sysS: m.sysS,
        devReadBytes: m.devReadBytes,
        warnings,
        audit,
      };
    },
  };
}

/**
 * Checks record `f` (0-based) of `path` as the seed's rd does, and every other element against
 * the seeded pattern (`expected`, its bytes `expectedBytes`); VerifyError naming the record.
 */
function checkRecord(
  path: string,
  s: ReaderSettings,
  f: number,
  chunks: readonly ReadChunk[],
  expected: Float64Array,
  expectedBytes: Uint8Array,
): void {
  const recordBytes = s.length * 8;
  // the record's array; gsd frames also hold its schema's configuration/step
  const chunk = chunks.find((c) => c.name === CHUNK) ??
    (chunks.length === 1 ? chunks[0] : undefined);
  if (
    chunk === undefined || chunk.dtype !== "float64" || chunk.data.length !== recordBytes
  ) {
    throw new VerifyError(
      `${path}: record ${f + 1} is not one array of ${s.length} doubles (${chunks.length} chunks, ${
        chunk?.data.length ?? 0
      } bytes)`,
    );
  }
  const bytes = chunk.data;
  const data = new Float64Array(bytes.buffer, bytes.byteOffset, s.length);
  // The seed's check, with its message: record i must hold i in its last element.
  const last = data[s.length - 1]!;
  if (last !== f + 1) {
    throw new VerifyError(
      `${path}: i=${f + 1} bad value = ${last} (a(${s.length}) of record ${f + 1})`,
    );
  }
  if (!bytesEqual(bytes, expectedBytes, recordBytes - 8)) {
    let k = 0;
    while (k < s.length - 1 && data[k] === expected[k]) k++;
    throw new VerifyError(
      `${path}: record ${f + 1}: a(${k + 1}) = ${data[k]}, expected ${
        expected[k]
      } (the seeded pattern)`,
    );
  }
}
