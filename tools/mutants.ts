/**
 * `deno task mutants`: the mutation check of issue 10. Each mutant is a change to the product that
 * would make its numbers lie (user and system ticks swapped, a write without its fsync, a cold
 * read without its drop, ...), written as exact search/replace edits of the source text. The tool
 * copies the project's tracked files to a temporary directory, checks that the relevant tests pass
 * there unchanged, then applies each mutant in turn and runs only its tests: every mutant must make
 * them fail. It fails loudly when an edit no longer applies (the code moved: update the mutant),
 * when a mutant does not type-check (not a real product change), and when a mutant survives.
 *
 *     deno task mutants            (all mutants)
 *     deno task mutants NAME...    (the mutants whose name contains one of the words)
 * @module
 */

/** One exact edit: `search` must occur exactly once in `file` (a path from the project root). */
interface Edit {
  readonly file: string;
  readonly search: string;
  readonly replace: string;
}

/** A product change and the tests that must catch it. */
interface Mutant {
  readonly name: string;
  readonly edits: readonly Edit[];
  /** Test files to run (paths from the project root). */
  readonly tests: readonly string[];
  /** `deno test --filter` value: only the tests that make the claim. */
  readonly filter: string;
}

const TABLE = "lib/workloads/table.ts";
const READERS = "lib/workloads/readers.ts";
const RECORDS = "lib/workloads/records.ts";
const METER = "lib/sys/meter.ts";
const AUDIT_TEST = "tests/audit_test.ts";
const TABLE_TESTS = "/table rows of every native|phase they describe/";
/** The table's sink options: its fsync policy, then the transfer (--bs, --direct). */
const TABLE_SINK = "      fsync,\n      transfer: options.transfer,";

const TRANSFER = "lib/io/transfer.ts";
const WRITE_CLI = "lib/cli/write.ts";
const CLI_TRANSFER_TEST = "tests/write_transfer_test.ts";
const COLD_TEST = "tests/cold_test.ts";
const TRANSFER_TEST = "tests/transfer_test.ts";
const LIBC = "lib/sys/libc.ts";
const AIO_TEST = "tests/aio_test.ts";
const DIRECT_TESTS = "/--direct opens with O_DIRECT|strace and the audit trail see O_DIRECT/";
const DIRECT_WRITES_TEST = "tests/direct_writes_test.ts";
const DIRECT_WRITES = "/transferAlignment|writes from page-aligned buffers/";

/** The claims of issue 10, each as the product change that breaks it. */
export const MUTANTS: readonly Mutant[] = [
  {
    name: "append: a signal after the commit says the file was left as it was",
    edits: [{
      file: "lib/io/journal.ts",
      search: 'return libc.fileStat(path).size === sizeBefore ? "as-it-was" : "complete";',
      replace: 'return "as-it-was";',
    }],
    tests: ["tests/append_test.ts"],
    filter: "/a signal during an append/",
  },
  {
    name: "write: --direct and --bs not passed to the backend",
    edits: [{
      file: WRITE_CLI,
      search: "{ create, endian, fsync, backendOptions, transfer },",
      replace: "{ create, endian, fsync, backendOptions },",
    }],
    tests: [CLI_TRANSFER_TEST],
    filter: "/write --direct --bs 64k/",
  },
  {
    name: "write --fsync none: the file is renamed into place without its fsync",
    edits: [{
      file: WRITE_CLI,
      search: 'if (fsync === "none") syncFile(temp);',
      replace: 'if (fsync === "none") Deno.statSync(temp);',
    }],
    tests: [CLI_TRANSFER_TEST],
    filter: "/write --fsync each fsyncs once per frame/",
  },
  {
    name: "read --direct: the cache is dropped anyway",
    edits: [{
      file: "lib/cli/read.ts",
      search:
        'cache === "direct" ? { seconds: 0, residentAfter: residency(path) } : dropCache(path);',
      replace: "dropCache(path);",
    }],
    tests: [CLI_TRANSFER_TEST],
    filter: "/read --direct --bs 64k/",
  },
  {
    name: "readers cold_ok: a shared file counted once per reader",
    edits: [{
      file: READERS,
      search: 'readBytes: Number(row.reader_bytes) / (mode === "shared" ? Number(row.procs) : 1),',
      replace: "readBytes: Number(row.reader_bytes),",
    }],
    tests: [COLD_TEST],
    filter: "/cold_ok in records, readers and read rows/",
  },
  {
    name: "records cold_ok: the read rows not judged",
    edits: [{
      file: RECORDS,
      search: 'cold.judge(judged, transfer?.direct ? "direct" : "cold", {',
      replace: 'cold.judge(judged, transfer?.direct ? "direct" : "warm", {',
    }],
    tests: [COLD_TEST],
    filter: "/drop is defeated/",
  },
  {
    name: "direct: the open without O_DIRECT",
    edits: [{
      file: "lib/io/file.ts",
      search: "fd = libc.open(path, FLAGS[mode] | (options.direct ? libc.O.DIRECT : 0));",
      replace: "fd = libc.open(path, FLAGS[mode]);",
    }],
    tests: [TRANSFER_TEST],
    filter: DIRECT_TESTS,
  },
  {
    name: "direct: the last block of a write not padded to the alignment",
    edits: [{
      file: TRANSFER,
      search: "const bytes = alignUp(fill, this.#align);",
      replace: "const bytes = fill;",
    }],
    tests: [TRANSFER_TEST],
    filter: DIRECT_TESTS,
  },
  {
    name: "fio baseline: fio's reads given the cell's size, past the whole blocks its write left",
    edits: [{
      file: "lib/peers/fio.ts",
      search: 'const size = phase === "write" ? cell.fileBytes : fioWrittenBytes(cell);',
      replace: "const size = cell.fileBytes;",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/the command line has|the file its write left/",
  },
  {
    name: "direct: the writer's staging buffers and read-backs at 512 bytes, not at pages",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "align = { ...transferAlignment(t, transfer.bs), hugePages: t.hugePages };",
      replace: "align = t;",
    }],
    tests: [DIRECT_WRITES_TEST],
    filter: DIRECT_WRITES,
  },
  {
    name: "direct: reads start where the range starts, not on the aligned offset below",
    edits: [{
      file: TRANSFER,
      search: "this.#lo = this.#hi = alignDown(offset, this.#align);",
      replace: "this.#lo = this.#hi = offset;",
    }],
    tests: [TRANSFER_TEST],
    filter: DIRECT_TESTS,
  },
  {
    name: "direct reads: offsets at the file system's 512 bytes, not at pages as fio's",
    edits: [{
      file: TRANSFER,
      search: "  const align = t.align < page && bs % page === 0 ? page : t.align;",
      replace: "  const align = t.align;",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/page offsets into page-aligned buffers/",
  },
  {
    name: "direct reads: the first buffer at the file system's alignment, not at a page",
    edits: [{
      file: TRANSFER,
      search: "    this.#buf = alignedBytes(bs, this.#memoryAlign, this.#hugePages);",
      replace: "    this.#buf = alignedBytes(bs, t.memoryAlign, this.#hugePages);",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/page offsets into page-aligned buffers/",
  },
  {
    name: "pipelined reads: frame k awaited before frame k + 1's read is started",
    edits: [{
      file: "lib/backends/overlap.ts",
      search: "      upcoming = k + 1 < n ? readAsync(order[k + 1]!) : undefined;\n" +
        "      const chunks: readonly C[] = await current!;\n",
      replace: "      const chunks: readonly C[] = await current!;\n" +
        "      upcoming = k + 1 < n ? readAsync(order[k + 1]!) : undefined;\n",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/started before frame k is awaited/",
  },
  {
    name: "pipelined reads: O_DIRECT sources not pipelined (frame k + 1 planned after k's reap)",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "    return this.#blocks !== undefined && this.#file.direct;",
      replace: "    return false;",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/reaps k then submits/",
  },
  {
    name: "buffered reads: a frame's largest chunk not placed on a cache line (slower memcmp)",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "    const shift = anchor === undefined ? fileOffset % 8 : anchor % LINE;",
      replace: "    const shift = fileOffset % 8;",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/largest chunk on a cache line/",
  },
  {
    name: "table frames: the expected arrays where the heap puts them (off a cache line)",
    edits: [{
      file: TABLE,
      search: "  return new Float32Array(bytes.buffer, bytes.byteOffset, count);",
      replace: "  return new Float32Array(bytes.length / 4);",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/expected arrays start on a cache line/",
  },
  {
    name: "baseline fio --direct: fio's read block at the file system's 512, not as our reads",
    edits: [{
      file: TABLE,
      search: "    frameReads ? (path) => directReadAlignment(path) : undefined,",
      replace: "    frameReads ? (path) => fileSystemAlignment(path).align : undefined,",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/reads aligned frames as ours/",
  },
  {
    name: "bs: without --direct the 4 MiB write batcher stays",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "this.#batch = transfer\n",
      replace: "this.#batch = transfer?.direct\n",
    }],
    tests: [TRANSFER_TEST],
    filter: "/--bs 64k writes the same bytes/",
  },
  {
    name: "meter: user and system times() ticks swapped",
    edits: [{
      file: METER,
      search: "userTicks: t1.user - t0.user,\n        sysTicks: t1.sys - t0.sys,",
      replace: "userTicks: t1.sys - t0.sys,\n        sysTicks: t1.user - t0.user,",
    }],
    tests: [AUDIT_TEST],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "libc: times() user and system fields swapped",
    edits: [{
      file: "lib/sys/libc.ts",
      search: "user: Number(tmsBuf[0]),\n    sys: Number(tmsBuf[1]),",
      replace: "user: Number(tmsBuf[1]),\n    sys: Number(tmsBuf[0]),",
    }],
    tests: [AUDIT_TEST],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "meter: ticks disagree with getrusage (children's ticks)",
    edits: [{
      file: METER,
      search: "userTicks: t1.user - t0.user,",
      replace: "userTicks: t1.childUser - t0.childUser,",
    }],
    tests: [AUDIT_TEST],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "meter: ticks disagree with getrusage (wrong ticks per second)",
    edits: [{
      file: METER,
      search: "if (clkTck === 0) clkTck = libc.clockTicksPerSecond();",
      replace: "if (clkTck === 0) clkTck = 1000;",
    }],
    tests: [AUDIT_TEST],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "table: the random phase reads the frames in order",
    edits: [{
      file: TABLE,
      search: 'readPhase(source, order, readFrames, p, "random", overlap)',
      replace: 'readPhase(source, seq, readFrames, p, "random", overlap)',
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "table: the sequential phase reads the frames out of order",
    edits: [{
      file: TABLE,
      search: 'readPhase(source, seq, readFrames, p, "read", overlap)',
      replace: 'readPhase(source, seq.slice().reverse(), readFrames, p, "read", overlap)',
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "table: the write phase without its fsync",
    edits: [{
      file: TABLE,
      search: TABLE_SINK,
      replace: TABLE_SINK.replace("fsync,", 'fsync: "none",'),
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "table: the fsync outside the timed write",
    edits: [
      {
        file: TABLE,
        search: TABLE_SINK,
        replace: TABLE_SINK.replace("fsync,", 'fsync: "none",'),
      },
      {
        file: TABLE,
        search: "const w = wm.stop();",
        replace: "const w = wm.stop();\n      fsyncPath(path);",
      },
      {
        file: TABLE,
        search: 'import { audited } from "../sys/audit.ts";',
        replace: 'import { audited } from "../sys/audit.ts";\n' +
          'import { fsyncPath } from "../peers/common.ts";',
      },
    ],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "engine: native writers close without the fsync they promise",
    edits: [{
      file: "lib/backends/engine.ts",
      search:
        'if (this.#fsync === "end" || (this.#fsync === "each" && this.#unsynced)) this.#file.sync();',
      replace: 'if (this.#fsync === "each" && this.#unsynced) this.#file.sync();',
    }],
    tests: [AUDIT_TEST],
    filter: "/table rows of every native|records rows/",
  },
  {
    name: "table: the open timed without the untimed warm-up opens (V8's compiler timed)",
    edits: [{
      file: TABLE,
      search: "      warmUpOpens(openClose);\n",
      replace: "",
    }],
    tests: [AUDIT_TEST],
    filter: "/carry a summary/",
  },
  {
    name: "fio baseline: fio's file is the read sample, not the cell's size",
    edits: [{
      file: "lib/peers/fio.ts",
      search: 'const size = phase === "write" ? cell.fileBytes : fioWrittenBytes(cell);',
      replace: "const size = cell.readBytes;",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/command line has the cell's size/",
  },
  {
    name: "fio baseline: fio's phases always after ours (no ABBA pairing)",
    edits: [{
      file: "lib/workloads/table.ts",
      search: "return repeat % 2 === 0;",
      replace: "return false;",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/baseline fio runs each fio phase/",
  },
  {
    name: "fio baseline: fio advises SEQUENTIAL/RANDOM access that ours does not",
    edits: [{
      file: "lib/peers/fio.ts",
      search: '"--fadvise_hint=0",',
      replace: "",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/baseline fio runs each fio phase/",
  },
  {
    name: "fio baseline: fio writes without the cell's fsync policy",
    edits: [{
      file: "lib/peers/fio.ts",
      search: 'if (cell.fsync !== "none") args.push("--end_fsync=1");',
      replace: "",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/command line has the cell's size/",
  },
  {
    name: "engine: --fsync each syncs at the end only, not after every frame",
    edits: [{
      file: "lib/backends/engine.ts",
      search: 'if (this.#fsync === "each" && this.#unsynced) this.#sync();',
      replace: "",
    }],
    tests: [AUDIT_TEST],
    filter: "/fsyncs once per frame/",
  },
  {
    name: "table: the read phases are not preceded by the cache drop",
    edits: [{
      file: TABLE,
      search: 'if (cache === "cold") return dropCache(path);',
      replace: 'if (cache === "cold") return { seconds: 0, residentAfter: residency(path) };',
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "read: the sequential phase is not preceded by the cache drop",
    edits: [{
      file: "lib/cli/read.ts",
      search: "const drop1 = drop();",
      replace: "const drop1 = { seconds: 0, residentAfter: 0 };",
    }],
    tests: [AUDIT_TEST],
    filter: "/read FILE --audit/",
  },
  {
    name: "records: the read phase is not preceded by the cache drop",
    edits: [{
      file: RECORDS,
      search: ": dropCache(readPath),",
      replace: ": { seconds: 0, residentAfter: 0 },",
    }],
    tests: [AUDIT_TEST],
    filter: "/records rows/",
  },
  {
    name: "readers --cache cold: the readers start without the cache drop",
    edits: [{
      file: READERS,
      search: 'if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);',
      replace: 'if (cache === "cold") resident = Math.max(resident, 0);',
    }],
    tests: [AUDIT_TEST],
    filter: "/readers shared and separate/",
  },
  {
    name: "readers --mode separate: all readers on one file",
    edits: [{
      file: READERS,
      search: '(_, k) => files[mode === "shared" ? 0 : k]!',
      replace: "(_, _k) => files[0]!",
    }],
    tests: [AUDIT_TEST],
    filter: "/readers shared and separate/",
  },
  {
    name: "readers --mode shared: one file per reader",
    edits: [
      {
        file: READERS,
        search: 'const nFiles = mode === "shared" ? 1 : procs;',
        replace: "const nFiles = procs;",
      },
      {
        file: READERS,
        search: '(_, k) => files[mode === "shared" ? 0 : k]!',
        replace: "(_, k) => files[k]!",
      },
    ],
    tests: [AUDIT_TEST],
    filter: "/readers shared and separate/",
  },
  {
    name: "table: read_dev_bytes taken from the random phase",
    edits: [{
      file: TABLE,
      search: "read_dev_bytes: r.devReadBytes,",
      replace: "read_dev_bytes: x.devReadBytes,",
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "table: no drop between the open and the read (an f77 or IEEEIO open caches the file)",
    edits: [{
      file: TABLE,
      search: '? await fencedPhase("drop", () => prepareCache(readPath, cache))',
      replace: "? { seconds: 0, residentAfter: 0 }",
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "table: resident_after_drop measured after the read phases",
    edits: [{
      file: TABLE,
      search: "resident_after_drop: drop1.residentAfter,",
      replace: "resident_after_drop: residency(path),",
    }],
    tests: [AUDIT_TEST],
    filter: TABLE_TESTS,
  },
  {
    name: "records: resident_after_drop measured after the read",
    edits: [
      {
        file: RECORDS,
        search: "residentAfterDrop: drop.residentAfter,",
        replace: "residentAfterDrop: residency(readPath),",
      },
    ],
    tests: [AUDIT_TEST],
    filter: "/records rows/",
  },
  {
    name: "overlap: frame k + 1 read only after frame k is visited (serial reads)",
    edits: [{
      file: "lib/backends/overlap.ts",
      search: "      next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;\n" +
        "      const seen = visit(order[k]!, chunks, k);\n      if (seen) await seen;",
      replace: "      const seen = visit(order[k]!, chunks, k);\n      if (seen) await seen;\n" +
        "      next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/is in flight while/",
  },
  {
    name: "table --overlap: the read phases without overlapped reads",
    edits: [{
      file: TABLE,
      search: "await readVerifiedFrames(source, order, frames, after, overlap, spent);",
      replace: "await readVerifiedFrames(source, order, frames, after, false, spent);",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/on another thread/",
  },
  {
    name: "table: --overlap not passed from the command line",
    edits: [{
      file: "lib/cli/table.ts",
      search: '          overlap: overlap.mode !== "none",\n',
      replace: "",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/on another thread/",
  },
  {
    name: "aio: the read in flight not waited for before the next is submitted",
    edits: [{
      file: LIBC,
      search: "  inFlight?.wait();\n  let id = ++lastReadId;",
      replace: "  let id = ++lastReadId;",
    }],
    tests: [AIO_TEST],
    filter: "/queue depth 1/",
  },
  {
    name: "aio: a frame's --bs reads submitted all at once (queue depth 2 and more)",
    edits: [{
      file: LIBC,
      search: "  inFlight?.wait();\n  let id = ++lastReadId;",
      replace: "  let id = ++lastReadId;",
    }, {
      // (the frame reads of --direct go through submitView: pipelined)
      file: TRANSFER,
      search: "      read = first && this.#file.preadSubmit(first, this.#hi);\n",
      replace: "      read = first && this.#file.preadSubmit(first, this.#hi);\n" +
        "      for (let h = this.#hi + (first?.length ?? 0); first && h < limit; h += this.#bs) {\n" +
        "        const end = Math.min(h + this.#bs, limit);\n" +
        "        this.#file.preadSubmit(this.#buf.subarray(h - this.#lo, end - this.#lo), h);\n" +
        "      }\n",
    }],
    tests: [AIO_TEST],
    filter: "/one read in flight/",
  },
  {
    name: "aio: a read's result given without waiting for it (io_getevents skipped)",
    edits: [{
      file: LIBC,
      search: "    if (this.#buf !== undefined) this.#reap();",
      replace: "    if (this.#buf !== undefined) {\n" +
        "      inFlight = undefined;\n" +
        "      this.#buf = undefined;\n" +
        "      this.#count = Number(iocb.getBigUint64(32, true));\n" +
        "    }",
    }],
    tests: [AIO_TEST],
    filter: "/one read in flight|waited for when asked/",
  },
  {
    name: "aio: the wait made at once, at the submission (no overlap)",
    edits: [{
      file: LIBC,
      search: "  inFlight = read;\n  return read;",
      replace: "  inFlight = read;\n  read.wait();\n  return read;",
    }],
    tests: [AIO_TEST],
    filter: "/while frame k is visited/",
  },
  {
    name: "table --direct: the reads serial by default (no native AIO)",
    edits: [{
      file: "lib/workloads/transfer.ts",
      search: '  if (why === undefined) return { mode: "aio" };',
      replace: '  if (why === undefined) return { mode: "none" };',
    }],
    tests: [AIO_TEST],
    filter: "/one read in flight/",
  },
  {
    name: "aio: a failed io_setup taken for a working context (no line says so)",
    edits: [{
      file: LIBC,
      search: "    if (Number(rc) === 0) aioContext = { id: aioCtxId[0]! };",
      replace: "    if (Number(rc) <= 0) aioContext = { id: aioCtxId[0]! };",
    }],
    tests: [AIO_TEST],
    filter: "/io_setup fails/",
  },
  {
    name: "records --direct: the records read one after the other (no native AIO)",
    edits: [{
      file: RECORDS,
      search: "                return signalPoint();\n              }, overlap);",
      replace: "                return signalPoint();\n              }, false);",
    }],
    tests: [AIO_TEST],
    filter: "/records --direct/",
  },
  {
    name: "read --verify --direct: the frames read one after the other (no native AIO)",
    edits: [{
      file: "lib/cli/read.ts",
      search:
        'const overlap = settings.verify && readOverlap(transfer, undefined).mode !== "none";',
      replace: "const overlap = settings.verify && transfer === undefined;",
    }],
    tests: [AIO_TEST],
    filter: "/read --verify --direct/",
  },
  {
    name: "table: verification turned off",
    edits: [{
      file: TABLE,
      search: "await readVerifiedFrames(source, order, frames, after, overlap, spent);",
      replace:
        "await readFramesOverlapped(order, nativeReads(source), (_i, _got, k) => after(k), overlap);",
    }, {
      file: TABLE,
      search: 'import { checkTransfer } from "../backends/engine.ts";',
      replace: 'import { checkTransfer } from "../backends/engine.ts";\n' +
        'import { nativeReads, readFramesOverlapped } from "../backends/overlap.ts";',
    }],
    tests: ["tests/cli_test.ts"],
    filter: "/verify-on-read/",
  },
  {
    name: "table frames: the big-endian expected bytes keep a stale per-frame stamp",
    edits: [{
      file: TABLE,
      search: 'new DataView(bytes.buffer).setFloat32(0, i, order === "little");',
      replace: "void i;",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/bytesIn|names the file offset/",
  },
  {
    name: "table: the big-endian expected bytes made inside the timed read phase",
    edits: [{
      file: TABLE,
      search: "  prepareVerified(source, frames);\n",
      replace: "  void prepareVerified;\n",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads/",
  },
  {
    name: "read --verify: the big-endian expected bytes made inside the timed read phase",
    edits: [{
      file: "lib/cli/read.ts",
      search: "if (pattern) prepareVerified(source, pattern);",
      replace: "void prepareVerified;",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads/",
  },
  {
    name: "netcdf: the index does not say its files are big-endian (nothing made before the reads)",
    edits: [{
      file: "lib/framings/netcdf/index.ts",
      search: '  readonly order: ByteOrder = "big";',
      replace: '  readonly order?: ByteOrder;\n  readonly #big: ByteOrder = "big";',
    }, {
      file: "lib/framings/netcdf/index.ts",
      search: "order: this.order,",
      replace: "order: this.#big,",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads|prepareVerified/",
  },
  {
    name: "verify: a stored big-endian chunk compared with the native expected bytes",
    edits: [{
      file: "lib/workloads/pattern.ts",
      search: "if (g.order === NATIVE_ORDER) return chunkBytes(chunks[k]!);",
      replace: "return chunkBytes(chunks[k]!);",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/readFrameStored: the file's big-endian/",
  },
  {
    name: "readers: gfortran's rd reads a cached file where sciobench's reader reads a dropped one",
    edits: [{
      file: READERS,
      search:
        'else if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);',
      replace: 'else if (cache === "cold" && o.reader !== "gfortran") {\n' +
        "      resident = Math.max(resident, dropCache(path).residentAfter);\n    }",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/measured alike on a cold cell/",
  },
  {
    name: "readers: sciobench's reader reads the file twice",
    edits: [{
      file: READERS,
      search:
        "      const source = backend.openReader(path, {\n        layout: packmanLayout(s.length),",
      replace:
        "      const twice = backend.openReader(path, { layout: packmanLayout(s.length), endian: s.endian, backendOptions: s.backendOptions });\n" +
        "      for (let f = 0; f < twice.frameCount; f++) twice.readFrame(f);\n      twice.close();\n" +
        "      const source = backend.openReader(path, {\n        layout: packmanLayout(s.length),",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/measured alike on a cold cell/",
  },
  {
    name: "file handle: the first large read made whole (no 128 KiB start for the readahead)",
    edits: [{
      file: "lib/io/file.ts",
      search: "    if (this.#ramped || buf.length < RAMP_MIN_BYTES) return buf;",
      replace: "    if (this.#ramped || buf.length < RAMP_MIN_BYTES || buf.length > 0) return buf;",
    }],
    tests: ["tests/file_test.ts"],
    filter: "/its first read of 1 MiB or more/",
  },
  {
    name: "cold scan: the first read through the mapping (a fault reads a readahead window)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "    if (far && first) return this.#firstRead(offset, length);",
      replace:
        '    if (far && first && this.#lease === "off") return this.#firstRead(offset, length);',
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name: "cold scan: a large record's far marker read leaves its page cached",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "if (far && sparse) return this.#sparseRead(offset, length);",
      replace: "if (far && sparse) return this.#farRead(offset, length);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name: "uncached read: preadv2 without RWF_DONTCACHE",
    edits: [{
      file: "lib/sys/libc.ts",
      search: "return preadv2Once(fd, buf, offset, path, address, RWF_DONTCACHE);",
      replace: "return preadv2Once(fd, buf, offset, path, address, 0);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name:
      "open scan: the first read no page-cache probe (a cachestat asks whether its window is cached)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "    this.#warmWindow = Math.floor(offset / WINDOW);\n    this.#warm = n === length;",
      replace: "    this.#warm = n === length;",
    }],
    tests: ["tests/open_syscalls_test.ts"],
    filter: "/f77 warm open of records over 1 MiB apart/",
  },
  {
    name: "open scan: a cached file's dense records mapped, not copied (page faults a record)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "if (near && !this.#released && this.#cached(offset)) return this.#copied(",
      replace: "if (near && this.#released && this.#cached(offset)) return this.#copied(",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/dense records are read from one copy window/",
  },
  {
    name: "open scan: a new copy window every open (a new 4 MiB array faulted in)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "const copy = spareCopy ?? new Uint8Array(WINDOW + OVERLAP);",
      replace: "const copy = new Uint8Array(WINDOW + OVERLAP);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/dense records are read from one copy window/",
  },
  {
    name: "open scan: a far record's marker one pread each, never read ahead in one io_submit",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "    if (p > 0) ahead.readAhead(p, this.#file.fd, this.size, this.path);",
      replace: "    if (p < 0) ahead.readAhead(p, this.#file.fd, this.size, this.path);",
    }],
    tests: ["tests/open_syscalls_test.ts"],
    filter: "/the next ones read ahead in one io_submit/",
  },
  {
    name: "preadMany: a read's count reported one short",
    edits: [{
      file: "lib/sys/libc.ts",
      search: "counts[k] = manyEventsSigned[e * 8 + 5]! * TWO32 + manyEvents[e * 8 + 4]!;",
      replace: "counts[k] = manyEventsSigned[e * 8 + 5]! * TWO32 + manyEvents[e * 8 + 4]! - 1;",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/preadMany/",
  },
  {
    name: "read buffers: a new buffer every open (its pages first touched inside the timed read)",
    edits: [{
      file: "lib/io/buffers.ts",
      search: "  return best >= 0 ? spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE, true);",
      replace: "  return alignedBytes(bytes, PAGE, true);",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/a closed source's buffer serves the next source's reads/",
  },
  {
    name: "open scan: a new far reads' buffer every open (its address looked up again)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "  if (far !== undefined) {",
      replace: "  if (far !== undefined && far.bytes.length < 0) {",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/goes from a released source/",
  },
  {
    name: "open scan: a cached file mapped at its first near window (a detection's lease and mmap)",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "const NEAR_PREADS = 4;",
      replace: "const NEAR_PREADS = 0;",
    }],
    tests: ["tests/open_scan_test.ts", "tests/mapped_test.ts"],
    filter: "/detection by preads|reused buffer/",
  },
  {
    name: "open scan: a new array for every far read of a cached file",
    edits: [{
      file: "lib/io/mapped.ts",
      search: "    if (buf === undefined || buf.length !== length) {",
      replace: "    if (buf === undefined || buf.length !== length || length > 0) {",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/reused buffer/",
  },
  {
    name: "ieeeio index: a doubled first block of dataset offsets loses what it held",
    edits: [{
      file: "lib/framings/ieeeio.ts",
      search: "            o.set(offsets);\n",
      replace: "",
    }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/4500 frames/",
  },
  {
    name: "ieeeio index: a doubled first block of frame_datasets attributes loses what it held",
    edits: [{ file: "lib/framings/ieeeio.ts", search: "        next.set(block!);\n", replace: "" }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/4500 frames/",
  },
  {
    name: "open scan: an f77 detection reads the leading markers again past its head",
    edits: [{
      file: "lib/framings/f77.ts",
      search: "    if (offset + w <= this.head.length) {",
      replace: "    if (offset + w <= this.head.length && offset > 0) {",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "open scan: an f77 detection's trailing markers one pread each",
    edits: [{
      file: "lib/framings/f77.ts",
      search: "const DETECT_AHEAD = 16;",
      replace: "const DETECT_AHEAD = 8;",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "open scan: the f77 scan reads again what the detection read",
    edits: [{
      file: "lib/framings/f77.ts",
      search: "  if (reads !== undefined) rd.seed(reads.head, reads.far);",
      replace: "",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "open scan: IEEEIO's file header and first peek two reads",
    edits: [{
      file: "lib/framings/ieeeio.ts",
      search: "  const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);",
      replace: "  const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES);",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/one 256-byte pread a dataset/",
  },
  {
    name: "ieeeio shapes: a shape past the first 8 met again made anew (no longer interned)",
    edits: [{
      file: "lib/framings/ieeeio.ts",
      search: "    let id = this.#ids.get(key);",
      replace: '    let id = this.#ids.get(key + " ");',
    }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/a shape met again is the one copy/",
  },
  {
    name: "ieeeio names: a name an earlier open met taken for another of its length",
    edits: [{
      file: "lib/framings/ieeeio.ts",
      search: "      if (p.bytes.length === length && sameBytesAt(bytes, view, at, p)) {",
      replace: "      if (p.bytes.length === length) {",
    }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/an earlier open met/",
  },
  {
    name: "columns: a doubled first block loses what it held",
    edits: [{
      file: "lib/framings/columns.ts",
      search: "    if (old !== undefined) block.set(old);\n",
      replace: "",
    }],
    tests: ["tests/columns_test.ts"],
    filter: "/number columns/",
  },
  {
    name: "--direct: the staging and read buffers not advised huge pages",
    edits: [{
      file: "lib/sys/libc.ts",
      search: "  adviseHugePages(raw.subarray(skip, skip + whole));\n",
      replace: "",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/every read and write buffer is advised/",
  },
  {
    name: "--direct: the block reader's buffers in 4 KiB pages",
    edits: [{
      file: "lib/io/transfer.ts",
      search: "    this.#hugePages = t.hugePages;\n    this.#size = t.file.size;",
      replace: "    this.#hugePages = false;\n    this.#size = t.file.size;",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/every read and write buffer is advised/",
  },
  {
    name: "buffered: the write batcher's and the read buffers in 4 KiB pages",
    edits: [
      {
        file: "lib/io/file.ts",
        search: "    const buf = takeSpareBuffer(this.#capacity).subarray(0, this.#capacity);",
        replace: "    const buf = new Uint8Array(this.#capacity);",
      },
      {
        file: "lib/io/buffers.ts",
        search: "spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE, true);",
        replace: "spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE);",
      },
    ],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/buffered table: the write batcher's/",
  },
  {
    name: "gsd writer: frame 0's HOOMD reference in new 4 KiB pages (faulted in inside the write)",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "  const bytes = takeSpareBuffer(data.byteLength);",
      replace: "  const bytes = new Uint8Array(data.byteLength);",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/keepCopy/",
  },
  {
    name: "gsd writer: the kept copy's buffer not given back at close (a new one every cell)",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "    for (const buf of this.#kept.splice(0)) giveBackSpareBuffer(buf);",
      replace: "    this.#kept.splice(0);",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/no new huge buffer per cell/",
  },
  {
    name: "write batcher: its buffers not given back once written (a new 4 MiB one every cell)",
    edits: [{
      file: "lib/io/file.ts",
      search: "    giveBackSpareBuffer(r.buf);",
      replace: "",
    }, {
      file: "lib/io/file.ts",
      search: 'import { giveBackSpareBuffer, takeSpareBuffer } from "./buffers.ts";',
      replace: 'import { takeSpareBuffer } from "./buffers.ts";',
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/no new huge buffer per cell/",
  },
  {
    name:
      "gsd writer: frame 0's HOOMD reference aliases the caller's arrays (later frames left out)",
    edits: [{
      file: "lib/backends/engine.ts",
      search: "  if (data.byteLength < HUGE_PAGES_MIN) return data.slice() as T;",
      replace: "  if (data.byteLength >= 0) return data;",
    }],
    tests: ["tests/gsd_test.ts"],
    filter: "/HOOMD reference is a copy/",
  },
  {
    name: "--baseline fio: fio not given huge pages where the machine allows",
    edits: [{
      file: "lib/peers/fio.ts",
      search: '  if (cell.hugePages) args.push("--mem=shmhuge");',
      replace: "",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/mem=shmhuge exactly when/",
  },
];

const PERMISSIONS = ["--allow-all"];
const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const decoder = new TextDecoder();

function say(text: string): void {
  console.error(`mutants: ${text}`);
}

/** Copies the files git tracks (and the working-tree edits of them) to a new directory. */
function copyProject(): string {
  const ls = new Deno.Command("git", { args: ["ls-files", "-z"], cwd: ROOT, stdout: "piped" })
    .outputSync();
  if (!ls.success) throw new Error("git ls-files failed: run from a git checkout");
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-mutants-" });
  for (const file of decoder.decode(ls.stdout).split("\0").filter((f) => f !== "")) {
    const to = `${dir}/${file}`;
    Deno.mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true });
    try {
      Deno.copyFileSync(`${ROOT}/${file}`, to);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e; // deleted in the working tree
    }
  }
  return dir;
}

/** Applies `edits`; returns the original texts, or the reason an edit does not apply. */
function apply(dir: string, edits: readonly Edit[]): Map<string, string> | string {
  const originals = new Map<string, string>();
  const texts = new Map<string, string>();
  for (const e of edits) {
    let text: string;
    try {
      text = texts.get(e.file) ?? Deno.readTextFileSync(`${dir}/${e.file}`);
    } catch {
      return `${e.file} does not exist (moved?)`;
    }
    if (!originals.has(e.file)) originals.set(e.file, text);
    const at = text.indexOf(e.search);
    if (at < 0) {
      return `${e.file}: the text to change is not there any more: ${JSON.stringify(e.search)}`;
    }
    if (text.indexOf(e.search, at + 1) >= 0) {
      return `${e.file}: the text to change occurs more than once: ${JSON.stringify(e.search)}`;
    }
    texts.set(e.file, text.slice(0, at) + e.replace + text.slice(at + e.search.length));
  }
  for (const [file, text] of texts) Deno.writeTextFileSync(`${dir}/${file}`, text);
  return originals;
}

interface TestRun {
  readonly code: number;
  readonly output: string;
}

async function runTests(dir: string, tests: readonly string[], filter?: string): Promise<TestRun> {
  const args = [
    "test",
    "--quiet",
    ...PERMISSIONS,
    ...(filter ? ["--filter", filter] : []),
    ...tests,
  ];
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: out.code, output: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

/** The first assertion message of a failed run, for the report. */
function firstFailure(output: string): string {
  const line = output.split("\n").find((l) => /^error: /.test(l.trim()));
  return (line ?? "").trim().slice(0, 160);
}

async function main(): Promise<number> {
  const words = Deno.args;
  const chosen = MUTANTS.filter((m) => words.length === 0 || words.some((w) => m.name.includes(w)));
  if (chosen.length === 0) {
    say(`no mutant matches ${words.join(" ")}`);
    return 2;
  }
  const t0 = performance.now();
  const dir = copyProject();
  let failures = 0;
  try {
    // Every edit must apply to the code as it is (checked before anything runs).
    for (const m of chosen) {
      const r = apply(dir, m.edits);
      if (typeof r === "string") {
        say(`MUTATION NO LONGER APPLIES: '${m.name}': ${r}; update tools/mutants.ts`);
        failures++;
        continue;
      }
      for (const [file, text] of r) Deno.writeTextFileSync(`${dir}/${file}`, text);
    }
    if (failures > 0) return 1;
    // The tests must pass on the unchanged copy, or a "caught" mutant proves nothing.
    const files = [...new Set(chosen.flatMap((m) => m.tests))];
    const filters = chosen.map((m) => m.filter.replace(/^\/|\/$/g, ""));
    const base = await runTests(dir, files, `/${[...new Set(filters)].join("|")}/`);
    if (base.code !== 0) {
      say(`the tests fail on the unchanged project (exit ${base.code}); fix them first:`);
      console.error(base.output.slice(-4000));
      return 1;
    }
    say(`baseline: ${files.join(" ")} pass unchanged`);
    for (const [k, m] of chosen.entries()) {
      const r = apply(dir, m.edits) as Map<string, string>;
      let run: TestRun;
      try {
        run = await runTests(dir, m.tests, m.filter);
      } finally {
        for (const [file, text] of r) Deno.writeTextFileSync(`${dir}/${file}`, text);
      }
      const label = `[${k + 1}/${chosen.length}] ${m.name}`;
      if (/Type checking failed|TS\d{4} \[ERROR\]/.test(run.output)) {
        say(`INVALID: ${label}: the mutant does not type-check:`);
        console.error(run.output.slice(0, 2000));
        failures++;
      } else if (run.code === 0) {
        say(`SURVIVED: ${label}: ${m.tests.join(" ")} --filter ${m.filter} still passes`);
        failures++;
      } else {
        say(`caught: ${label} (${firstFailure(run.output)})`);
      }
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(0);
  say(
    failures === 0
      ? `all ${chosen.length} mutants caught (${secs} s)`
      : `${failures} of ${chosen.length} mutants not caught or not applicable (${secs} s)`,
  );
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
