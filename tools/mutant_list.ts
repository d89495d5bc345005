/**
 * The mutants of `deno task mutants` (tools/mutants.ts): each is a change to the product that
 * would make its numbers lie (user and system ticks swapped, a write without its fsync, a cold
 * read without its drop, ...), and the tests that must catch it.
 *
 * An edit names a marker, a comment line `// mutant: NAME` somewhere under lib/ directly above
 * the code it changes, and a search text that must occur exactly once in the `MARKER_WINDOW_LINES`
 * lines after the marker. Whitespace in the search text matches any run of whitespace (or none),
 * so reformatting or re-indenting the code keeps the mutant applicable; moving the code with its
 * marker to another file keeps it too.
 * @module
 */

/** How many lines after its marker an edit's search text may start and end in. */
export const MARKER_WINDOW_LINES = 12;

/** One change: `search` replaced by `replace`, within the lines after the marker `marker`. */
export interface MutantEdit {
  /** The marker's name: the line `// mutant: NAME` under lib/ (kebab-case). */
  readonly marker: string;
  /** The code to change; whitespace matches any whitespace. */
  readonly search: string;
  /** The code put in its place, verbatim. */
  readonly replace: string;
}

/** An import a mutant's code needs, added to the file of the mutant's first edit. */
export interface MutantImport {
  /** The names imported. */
  readonly names: readonly string[];
  /** The module, a path from the project root (made relative to the edited file). */
  readonly from: string;
}

/** A product change and the tests that must catch it. */
export interface Mutant {
  /** Short kebab-case id, for `deno task mutants NAME` and the report. */
  readonly name: string;
  /** The claim the change breaks, in words. */
  readonly claim: string;
  readonly edits: readonly MutantEdit[];
  readonly imports?: readonly MutantImport[];
  /** Test files to run (paths from the project root). */
  readonly tests: readonly string[];
  /** `deno test --filter` value: only the tests that make the claim. */
  readonly filter: string;
}

/** The claims the measurements rest on, each as the product change that breaks it. */
export const MUTANTS: readonly Mutant[] = [
  {
    name: "store-chunks-before-metadata",
    claim: "zarr: every chunk file is fsynced before the metadata that makes it visible",
    edits: [{
      marker: "store-chunks-before-metadata",
      search: 'const ops: WriteOp[] = [{ kind: "sync" }];',
      replace: "const ops: WriteOp[] = [];",
    }],
    tests: ["tests/zarr_test.ts"],
    filter: "/fsynced before the metadata/",
  },
  {
    name: "zarr-shard-index-bounds",
    claim: "zarr v3: a shard index entry outside the shard's data is refused, not read",
    edits: [{
      marker: "zarr-shard-index-bounds",
      search: "if (offset < lo || offset + bytes > hi) {",
      replace: "if (offset < lo && offset + bytes > hi) {",
    }],
    tests: ["tests/zarr_v3_test.ts"],
    filter: "/hostile shard index/",
  },
  {
    name: "zip-deflated-crc",
    claim: "zarr zip stores: a deflated entry whose CRC-32 differs is refused, not read",
    edits: [{
      marker: "zip-deflated-crc",
      search: "if ((crc32(bytes) >>> 0) !== e.crc)",
      replace: "if ((crc32(bytes) >>> 0) !== e.crc && e.crc < 0)",
    }],
    tests: ["tests/zarr_zip_test.ts"],
    filter: "/damaged archive/",
  },
  {
    name: "zarr-shard-index-crc",
    claim: "zarr v3: a shard index whose CRC-32C differs is refused",
    edits: [{
      marker: "zarr-shard-index-crc",
      search: "if (want !== got) {",
      replace: "if (want !== got && want < 0) {",
    }],
    tests: ["tests/zarr_v3_test.ts"],
    filter: "/hostile shard index/",
  },
  {
    name: "zarr-chunk-crc",
    claim: "zarr v3: a chunk whose CRC-32C differs is refused, not read as data",
    edits: [{
      marker: "zarr-chunk-crc",
      search: "if (body < 0 || crc32c(stored.subarray(0, body)) !== want) {",
      replace: "if (body < 0) {",
    }],
    tests: ["tests/zarr_v3_test.ts"],
    filter: "/CRC-32C differs/",
  },
  {
    name: "store-sync-directories",
    claim: "a store's sync makes the directories it made or gave entries durable",
    edits: [{
      marker: "store-sync-directories",
      search: "for (const dir of dirs) syncPath",
      replace: "for (const dir of dirs.slice(dirs.length)) syncPath",
    }],
    tests: ["tests/zarr_test.ts"],
    filter: "/fsynced before the metadata/",
  },
  {
    name: "store-replace-rename",
    claim: "zarr append: each metadata file is replaced atomically (a temporary renamed over it)",
    edits: [{
      marker: "store-replace-rename",
      search: "libc.rename(temp, `${this.root}/${name}`);",
      replace: "Deno.copyFileSync(temp, `${this.root}/${name}`);\n    Deno.removeSync(temp);",
    }],
    tests: ["tests/zarr_append_test.ts"],
    filter: "/each replaced by a rename/",
  },
  {
    name: "store-journal-saves",
    claim: "zarr append: the old metadata is in the journal before it is replaced",
    edits: [{
      marker: "store-journal-saves",
      search: "journal.save(replaced);",
      replace: "journal.save([]);",
    }],
    tests: ["tests/zarr_append_test.ts"],
    filter: "/the next command puts the store back/",
  },
  {
    name: "store-sync-opens-directory",
    claim: "table: a store's directory syncs count as directories synced, apart from its files",
    edits: [{
      marker: "store-sync-opens-directory",
      search: "libc.O.RDONLY | (directory ? libc.O.DIRECTORY : 0)",
      replace: "libc.O.RDONLY",
    }],
    tests: ["tests/metadata_columns_test.ts"],
    filter: "/metadata columns count/",
  },
  {
    name: "store-journal-identity",
    claim: "zarr append: a journal is applied only to the store it was made for",
    edits: [{
      marker: "store-journal-identity",
      search: "doc !== undefined && (doc.dev !== dev || doc.ino !== ino)",
      replace: "false",
    }],
    tests: ["tests/zarr_append_test.ts"],
    filter: "/since replaced is never applied/",
  },
  {
    name: "store-every-file",
    claim: "a cold read of a store drops, and its residency covers, every file of it",
    edits: [{
      marker: "store-every-file",
      search: "storeFiles(path)",
      replace: "storeFiles(path).slice(0, 2)",
    }],
    tests: ["tests/zarr_test.ts"],
    filter: "/cold drop and residency cover every file/",
  },
  {
    name: "journal-signal-after-commit",
    claim: "append: a signal after the commit says the file was left as it was",
    edits: [{
      marker: "journal-signal-after-commit",
      search: 'return libc.fileStat(path).size === sizeBefore ? "as-it-was" : "complete";',
      replace: 'return "as-it-was";',
    }],
    tests: ["tests/append_test.ts"],
    filter: "/a signal during an append/",
  },
  {
    name: "write-cli-transfer",
    claim: "write: --direct and --bs not passed to the backend",
    edits: [{
      marker: "write-cli-transfer",
      search: "{ create, endian, fsync, backendOptions, transfer },",
      replace: "{ create, endian, fsync, backendOptions },",
    }],
    tests: ["tests/write_transfer_test.ts"],
    filter: "/write --direct --bs 64k/",
  },
  {
    name: "write-cli-fsync-none",
    claim: "write --fsync none: the file is renamed into place without its fsync",
    edits: [{
      marker: "write-cli-fsync-none",
      search: 'if (fsync === "none" && store === undefined) syncFile(temp);',
      replace: 'if (fsync === "none" && store === undefined) Deno.statSync(temp);',
    }],
    tests: ["tests/write_transfer_test.ts"],
    filter: "/write --fsync each fsyncs once per frame/",
  },
  {
    name: "read-direct-drop",
    claim: "read --direct: the cache is dropped anyway",
    edits: [{
      marker: "read-direct-drop",
      search:
        'cache === "direct" ? { seconds: 0, residentAfter: residency(path) } : dropCache(path);',
      replace: "dropCache(path);",
    }],
    tests: ["tests/write_transfer_test.ts"],
    filter: "/read --direct --bs 64k/",
  },
  {
    name: "readers-cold-ok-shared-bytes",
    claim: "readers cold_ok: a shared file counted once per reader",
    edits: [{
      marker: "readers-cold-ok-shared-bytes",
      search: 'readBytes: Number(row.reader_bytes) / (mode === "shared" ? Number(row.procs) : 1),',
      replace: "readBytes: Number(row.reader_bytes),",
    }],
    tests: ["tests/cold_test.ts"],
    filter: "/cold_ok in records, readers and read rows/",
  },
  {
    name: "records-cold-ok-judge",
    claim: "records cold_ok: the read rows not judged",
    edits: [{
      marker: "records-cold-ok-judge",
      search: 'cold.judge(judged, transfer?.direct ? "direct" : "cold", {',
      replace: 'cold.judge(judged, transfer?.direct ? "direct" : "warm", {',
    }],
    tests: ["tests/cold_test.ts"],
    filter: "/drop is defeated/",
  },
  {
    name: "direct-open-flag",
    claim: "direct: the open without O_DIRECT",
    edits: [{
      marker: "direct-open-flag",
      search: "fd = libc.open(path, FLAGS[mode] | (options.direct ? libc.O.DIRECT : 0));",
      replace: "fd = libc.open(path, FLAGS[mode]);",
    }],
    tests: ["tests/transfer_test.ts"],
    filter: "/--direct opens with O_DIRECT|strace and the audit trail see O_DIRECT/",
  },
  {
    name: "direct-write-pad",
    claim: "direct: the last block of a write not padded to the alignment",
    edits: [{
      marker: "direct-write-pad",
      search: "const bytes = alignUp(fill, this.#align);",
      replace: "const bytes = fill;",
    }],
    tests: ["tests/transfer_test.ts"],
    filter: "/--direct opens with O_DIRECT|strace and the audit trail see O_DIRECT/",
  },
  {
    name: "fio-read-size",
    claim: "fio baseline: fio's reads given the cell's size, past the whole blocks its write left",
    edits: [{
      marker: "fio-read-size",
      search: 'const size = phase === "write" ? cell.fileBytes : fioWrittenBytes(cell);',
      replace: "const size = cell.fileBytes;",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/the command line has|the file its write left/",
  },
  {
    name: "direct-writer-page-align",
    claim: "direct: the writer's staging buffers and read-backs at 512 bytes, not at pages",
    edits: [{
      marker: "direct-writer-page-align",
      search: "align = { ...transferAlignment(t, transfer.bs), hugePages: t.hugePages };",
      replace: "align = t;",
    }],
    tests: ["tests/direct_writes_test.ts"],
    filter: "/transferAlignment|writes from page-aligned buffers/",
  },
  {
    name: "direct-read-align-down",
    claim: "direct: reads start where the range starts, not on the aligned offset below",
    edits: [{
      marker: "direct-read-align-down",
      search: "this.#lo = this.#hi = alignDown(offset, this.#align);",
      replace: "this.#lo = this.#hi = offset;",
    }],
    tests: ["tests/transfer_test.ts"],
    filter: "/--direct opens with O_DIRECT|strace and the audit trail see O_DIRECT/",
  },
  {
    name: "direct-read-page-offsets",
    claim: "direct reads: offsets at the file system's 512 bytes, not at pages as fio's",
    edits: [{
      marker: "direct-read-page-offsets",
      search: "const align = t.align < page && bs % page === 0 ? page : t.align;",
      replace: "const align = t.align;",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/page offsets into page-aligned buffers/",
  },
  {
    name: "direct-read-page-buffer",
    claim: "direct reads: the first buffer at the file system's alignment, not at a page",
    edits: [{
      marker: "direct-read-page-buffer",
      search: "this.#buf = alignedBytes(bs, this.#memoryAlign, this.#hugePages);",
      replace: "this.#buf = alignedBytes(bs, t.memoryAlign, this.#hugePages);",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/page offsets into page-aligned buffers/",
  },
  {
    name: "pipelined-read-ahead",
    claim: "pipelined reads: frame k awaited before frame k + 1's read is started",
    edits: [{
      marker: "pipelined-read-ahead",
      search:
        "upcoming = k + 1 < n ? readAsync(order[k + 1]!) : undefined;\n      const chunks: readonly C[] = await current!;",
      replace:
        "const chunks: readonly C[] = await current!;\n      upcoming = k + 1 < n ? readAsync(order[k + 1]!) : undefined;",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/started before frame k is awaited/",
  },
  {
    name: "pipelined-direct",
    claim: "pipelined reads: O_DIRECT sources not pipelined (frame k + 1 planned after k's reap)",
    edits: [{
      marker: "pipelined-direct",
      search: "return this.#blocks !== undefined && this.#file.direct;",
      replace: "return false;",
    }],
    tests: ["tests/direct_reads_test.ts"],
    filter: "/reaps k then submits/",
  },
  {
    name: "read-place-cache-line",
    claim: "buffered reads: a frame's largest chunk not placed on a cache line (slower memcmp)",
    edits: [{
      marker: "read-place-cache-line",
      search: "const shift = anchor === undefined ? fileOffset % 8 : anchor % LINE;",
      replace: "const shift = fileOffset % 8;",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/largest chunk on a cache line/",
  },
  {
    name: "table-expected-cache-line",
    claim: "table frames: the expected arrays where the heap puts them (off a cache line)",
    edits: [{
      marker: "table-expected-cache-line",
      search: "return new Float32Array(bytes.buffer, bytes.byteOffset, count);",
      replace: "return new Float32Array(bytes.length / 4);",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/expected arrays start on a cache line/",
  },
  {
    name: "fio-direct-read-align",
    claim: "baseline fio --direct: fio's read block at the file system's 512, not as our reads",
    edits: [{
      marker: "fio-direct-read-align",
      search: "frameReads ? (path) => directReadAlignment(path) : undefined,",
      replace: "frameReads ? (path) => fileSystemAlignment(path).align : undefined,",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/reads aligned frames as ours/",
  },
  {
    name: "bs-write-batcher",
    claim: "bs: without --direct the 4 MiB write batcher stays",
    edits: [{
      marker: "bs-write-batcher",
      search: "this.#batch = transfer",
      replace: "this.#batch = transfer?.direct",
    }],
    tests: ["tests/transfer_test.ts"],
    filter: "/--bs 64k writes the same bytes/",
  },
  {
    name: "meter-ticks-swapped",
    claim: "meter: user and system times() ticks swapped",
    edits: [{
      marker: "meter-ticks",
      search: "userTicks: t1.user - t0.user,\n        sysTicks: t1.sys - t0.sys,",
      replace: "userTicks: t1.sys - t0.sys,\n        sysTicks: t1.user - t0.user,",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "libc-times-swapped",
    claim: "libc: times() user and system fields swapped",
    edits: [{
      marker: "libc-times-swapped",
      search: "user: Number(tmsBuf[0]),\n    sys: Number(tmsBuf[1]),",
      replace: "user: Number(tmsBuf[1]),\n    sys: Number(tmsBuf[0]),",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "meter-children-ticks",
    claim: "meter: ticks disagree with getrusage (children's ticks)",
    edits: [{
      marker: "meter-ticks",
      search: "userTicks: t1.user - t0.user,",
      replace: "userTicks: t1.childUser - t0.childUser,",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "meter-clock-ticks",
    claim: "meter: ticks disagree with getrusage (wrong ticks per second)",
    edits: [{
      marker: "meter-clock-ticks",
      search: "if (clkTck === 0) clkTck = libc.clockTicksPerSecond();",
      replace: "if (clkTck === 0) clkTck = 1000;",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/ticks agree with getrusage/",
  },
  {
    name: "table-random-order",
    claim: "table: the random phase reads the frames in order",
    edits: [{
      marker: "table-random-order",
      search: 'readPhase(source, order, readFrames, p, "random", overlap, queue)',
      replace: 'readPhase(source, seq, readFrames, p, "random", overlap, queue)',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "table-sequential-order",
    claim: "table: the sequential phase reads the frames out of order",
    edits: [{
      marker: "table-sequential-order",
      search: 'readPhase(source, seq, readFrames, p, "read", overlap, queue)',
      replace: 'readPhase(source, seq.slice().reverse(), readFrames, p, "read", overlap, queue)',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "table-write-fsync",
    claim: "table: the write phase without its fsync",
    edits: [{
      marker: "table-write-fsync",
      search: "fsync,\n      transfer: options.transfer,",
      replace: 'fsync: "none",\n      transfer: options.transfer,',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "table-fsync-untimed",
    claim: "table: the fsync outside the timed write",
    edits: [{
      marker: "table-write-fsync",
      search: "fsync,\n      transfer: options.transfer,",
      replace: 'fsync: "none",\n      transfer: options.transfer,',
    }, {
      marker: "table-write-stop",
      search: "const w = wm.stop();",
      replace: "const w = wm.stop();\n      fsyncPath(path);",
    }],
    imports: [{ names: ["fsyncPath"], from: "lib/peers/common.ts" }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "engine-close-fsync",
    claim: "engine: native writers close without the fsync they promise",
    edits: [{
      marker: "engine-close-fsync",
      search:
        'if (this.#fsync === "end" || (this.#fsync === "each" && this.#unsynced)) this.#file.sync();',
      replace: 'if (this.#fsync === "each" && this.#unsynced) this.#file.sync();',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|records rows/",
  },
  {
    name: "mpiio-shared-sync",
    claim: "mpiio: a shared file's write ends without MPI_File_sync (no durable point)",
    edits: [{
      marker: "mpiio-shared-sync",
      search: 'if (this.#fsync !== "none") {',
      replace: 'if (this.#fsync === "each") {',
    }],
    tests: ["tests/mpi_mpiio_test.ts"],
    filter: "/table --framing raw,mpiio --layout shared on 2 nodes/",
  },
  {
    name: "shared-segment-order",
    claim: "--segments: a shared file keeps each rank's frames one block (IOR's -s ignored)",
    edits: [{
      marker: "shared-segment-order",
      search: "frameOf: (i, rank = w.rank) => (Math.floor(i / block) * ranks + rank) * block + " +
        "(i % block),",
      replace: "frameOf: (i, rank = w.rank) => rank * perRank + i,",
    }, {
      marker: "shared-segment-order",
      search: "ownerOf: (g) => Math.floor(g / block) % ranks,",
      replace: "ownerOf: (g) => Math.floor(g / perRank),",
    }],
    tests: ["tests/mpi_segments_test.ts"],
    filter: "/interleave the ranks' blocks/",
  },
  {
    name: "mpiio-bs-calls",
    claim: "mpiio: --bs is not the size of its MPI-IO write calls (IOR's -t ignored)",
    edits: [{
      marker: "mpiio-bs-calls",
      search: "if (this.#bs !== undefined) {",
      replace: "if (this.#bs === -1) {",
    }],
    tests: ["tests/mpi_segments_test.ts"],
    filter: "/--bs is the size of each MPI-IO call/",
  },
  {
    name: "table-cell-warm-up-read",
    claim: "table: the cell's untimed warm-up writes its file but never reads it back",
    edits: [{
      marker: "table-cell-warm-up-read",
      search: 'await fencedPhase("warm-up read", () =>',
      replace: 'if (Deno.env.get("SCIOBENCH_NEVER")) await fencedPhase("warm-up read", () =>',
    }],
    tests: ["tests/table_order_test.ts"],
    filter: "/cell's warm-up/",
  },
  {
    name: "compare-control-gate",
    claim: "compare: the answer is relative to the control even where the control did not move",
    edits: [{
      marker: "compare-control-gate",
      search: "return flaggedChange(control) ? relative.verdict : change.verdict;",
      replace: "return relative.verdict;",
    }],
    tests: ["tests/compare_logic_test.ts"],
    filter: "/only where it moved/",
  },
  {
    name: "compare-moved-with",
    claim: "compare: a backend that moved as the control did is called a regression",
    edits: [{
      marker: "compare-moved-with",
      search: 'if (movedWith(change, control, threshold)) return "same";',
      replace: "",
    }],
    tests: ["tests/compare_logic_test.ts"],
    filter: "/moved as the control did/",
  },
  {
    name: "compare-control-machine",
    claim: "compare: the control's own change is a regression though every backend moved with it",
    edits: [{
      marker: "compare-control-machine",
      search: "if (!flaggedChange(c.change) || !moved?.every(beyond)) return c;",
      replace: "return c;",
    }],
    tests: ["tests/compare_logic_test.ts"],
    filter: "/said to be the machine/",
  },
  {
    name: "compare-median-latency",
    claim: "compare: the phases' median latencies are left out of the default metrics",
    edits: [{
      marker: "compare-median-latency",
      search:
        "return all.filter((m) => workload.human.includes(m.name) || medians.includes(m.name));",
      replace: "return all.filter((m) => workload.human.includes(m.name) || medians.length < 0);",
    }],
    tests: ["tests/compare_logic_test.ts"],
    filter: "/median latency is compared by default/",
  },
  {
    name: "hdf5-mpio-flush",
    claim: "hdf5-mpio: a file's write ends without H5Fflush (no durable point)",
    edits: [{
      marker: "hdf5-mpio-flush",
      search: "if (!this.#fsync) return;",
      replace: "return;",
    }],
    tests: ["tests/mpi_hdf5_mpio_test.ts"],
    filter: "/table --framing raw,hdf5-mpio --layout shared on 2 nodes/",
  },
  {
    name: "pnetcdf-shared-sync",
    claim: "pnetcdf: a shared file's write ends without ncmpi_sync (no durable point)",
    edits: [{
      marker: "pnetcdf-shared-sync",
      search: "if (this.#fsync) this.#sync();",
      replace: "",
    }],
    tests: ["tests/mpi_pnetcdf_test.ts"],
    filter: "/table --framing netcdf,pnetcdf --layout shared on 2 nodes/",
  },
  {
    name: "pnetcdf-netcdf-layout",
    claim:
      "pnetcdf: its files are netcdf's and netcdf-lib's byte for byte (netCDF-C's header layout)",
    edits: [{
      marker: "pnetcdf-netcdf-layout",
      search: "const ENDDEF = { hMinfree: 0n, vAlign: 4n, vMinfree: 0n, rAlign: 4n } as const;",
      replace: "const ENDDEF = { hMinfree: 0n, vAlign: 0n, vMinfree: 0n, rAlign: 0n } as const;",
    }],
    tests: ["tests/mpi_pnetcdf_test.ts"],
    filter: "/byte for byte/",
  },
  {
    name: "netcdf4-par-shared-sync",
    claim: "netcdf4-par: a shared file's write ends without nc_sync (no durable point)",
    edits: [{
      marker: "netcdf4-par-shared-sync",
      search: "if (this.#fsync) this.#sync();",
      replace: "",
    }],
    tests: ["tests/mpi_netcdf4_par_test.ts"],
    filter: "/shared on 2 nodes/",
  },
  {
    name: "loader-queue",
    claim:
      "loader: --iodepth is accepted and reported, but each batch is read one sample at a time",
    edits: [{
      marker: "loader-queue",
      search: "  if (queue !== undefined) {\n    if (expected !== undefined) {",
      replace: "  if (queue !== undefined && !queue) {\n    if (expected !== undefined) {",
    }],
    tests: ["tests/loader_test.ts"],
    filter: "/--iodepth 8 --engine io_uring/",
  },
  {
    name: "table-warm-up-opens",
    claim: "table: the open timed without the untimed warm-up opens (V8's compiler timed)",
    edits: [{
      marker: "table-warm-up-opens",
      search: "warmUpOpens(openClose, shared && readIo !== undefined);",
      replace: "",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/carry a summary/",
  },
  {
    name: "fio-read-size-sample",
    claim: "fio baseline: fio's file is the read sample, not the cell's size",
    edits: [{
      marker: "fio-read-size",
      search: 'const size = phase === "write" ? cell.fileBytes : fioWrittenBytes(cell);',
      replace: "const size = cell.readBytes;",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/command line has the cell's size/",
  },
  {
    name: "fio-abba-pairing",
    claim: "fio baseline: fio's phases always after ours (no ABBA pairing)",
    edits: [{
      marker: "fio-abba-pairing",
      search: "return repeat % 2 === 0;",
      replace: "return false;",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/baseline fio runs each fio phase/",
  },
  {
    name: "fio-fadvise-hint",
    claim: "fio baseline: fio advises SEQUENTIAL/RANDOM access that ours does not",
    edits: [{ marker: "fio-fadvise-hint", search: '"--fadvise_hint=0",', replace: "" }],
    tests: ["tests/observer_test.ts"],
    filter: "/baseline fio runs each fio phase/",
  },
  {
    name: "fio-end-fsync",
    claim: "fio baseline: fio writes without the cell's fsync policy",
    edits: [{
      marker: "fio-end-fsync",
      search: 'if (cell.fsync !== "none") args.push("--end_fsync=1");',
      replace: "",
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/command line has the cell's size/",
  },
  {
    name: "engine-fsync-each",
    claim: "engine: --fsync each syncs at the end only, not after every frame",
    edits: [{
      marker: "engine-fsync-each",
      search: 'if (this.#fsync === "each" && this.#unsynced) this.#sync();',
      replace: "",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/fsyncs once per frame/",
  },
  {
    name: "table-cold-drop",
    claim: "table: the read phases are not preceded by the cache drop",
    edits: [{
      marker: "table-cold-drop",
      search: 'if (cache === "cold") return dropCache(path);',
      replace: 'if (cache === "cold") return { seconds: 0, residentAfter: residency(path) };',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "read-cold-drop",
    claim: "read: the sequential phase is not preceded by the cache drop",
    edits: [{
      marker: "read-cold-drop",
      search: "const drop1 = drop();",
      replace: "const drop1 = { seconds: 0, residentAfter: 0 };",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/read FILE --audit/",
  },
  {
    name: "loader-direct-path",
    claim:
      "loader --access direct reads each sample through the HDF5 library, not the chunks' bytes",
    edits: [{
      marker: "loader-direct-path",
      search: 'if (access === "direct") return openDirectSource(',
      replace: 'if (access === "direct" && !access) return openDirectSource(',
    }],
    tests: ["tests/loader_chunks_test.ts"],
    filter: "/every chunk read once per epoch/",
  },
  {
    name: "loader-chunks-vetted",
    claim:
      "loader --file --access direct runs the HDF5 library on a user's file in sciobench's own " +
      "process first: a damaged file crashes it",
    edits: [{
      marker: "loader-chunks-vetted",
      search: "if (!isolates(backend)) return;",
      replace: 'if (!isolates(backend) || o.access === "direct") return;',
    }],
    tests: ["tests/loader_chunks_test.ts"],
    filter: "/crashes the HDF5 library|runs first in the library child/",
  },
  {
    name: "chunks-filtered-refused",
    claim:
      "loader --access direct reads a compressed dataset's stored bytes as if they were samples",
    edits: [{
      marker: "chunks-filtered-refused",
      search: "if (filters.length > 0) throw",
      replace: "if (filters.length < 0) throw",
    }],
    tests: ["tests/loader_chunks_test.ts"],
    filter: "/compressed dataset/",
  },
  {
    name: "loader-cold-drop",
    claim: "loader: the first epoch is not preceded by the cache drop",
    edits: [{
      marker: "loader-cold-drop",
      search: "prepareCache(file.path, cache).residentAfter",
      replace: "residency(file.path)",
    }],
    tests: ["tests/loader_test.ts"],
    filter: "/read every frame exactly once/",
  },
  {
    name: "loader-accel-util",
    claim: "loader: accel_util is compute over compute and the wait for data",
    edits: [{
      marker: "loader-accel-util",
      search: "computeS / (computeS + loadS)",
      replace: "computeS / (computeS + loadS + computeS)",
    }],
    tests: ["tests/loader_test.ts"],
    filter: "/utilisation/",
  },
  {
    name: "loader-reader-batches",
    claim: "loader --readers K: the readers share an epoch's batches, each read by one reader",
    edits: [{
      marker: "loader-reader-batches",
      search: "for (let b = k; b < batches; b += readers)",
      replace: "for (let b = 0; b < batches; b++)",
    }],
    tests: ["tests/loader_test.ts"],
    filter: "/every frame once across the readers/",
  },
  {
    name: "loader-shuffle-permutation",
    claim: "loader: a shuffled epoch reads every frame once (a permutation, not draws)",
    edits: [{
      marker: "loader-shuffle-permutation",
      search: 'if (sampling === "shuffle")',
      replace: "if (sampling !== sampling)",
    }],
    tests: ["tests/loader_test.ts"],
    filter: "/read every frame exactly once/",
  },
  {
    name: "records-cold-drop",
    claim: "records: the read phase is not preceded by the cache drop",
    edits: [{
      marker: "records-cold-drop",
      search: ": dropCache(readPath),",
      replace: ": { seconds: 0, residentAfter: 0 },",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/records rows/",
  },
  {
    name: "readers-cold-drop",
    claim: "readers --cache cold: the readers start without the cache drop",
    edits: [{
      marker: "readers-cold-drop",
      search: 'if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);',
      replace: 'if (cache === "cold") resident = Math.max(resident, 0);',
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/readers shared and separate/",
  },
  {
    name: "readers-separate-files",
    claim: "readers --mode separate: all readers on one file",
    edits: [{
      marker: "readers-file-of-reader",
      search: '(_, k) => files[mode === "shared" ? 0 : k]!',
      replace: "(_, _k) => files[0]!",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/readers shared and separate/",
  },
  {
    name: "readers-shared-file",
    claim: "readers --mode shared: one file per reader",
    edits: [{
      marker: "readers-file-count",
      search: 'const nFiles = mode === "shared" ? 1 : procs;',
      replace: "const nFiles = procs;",
    }, {
      marker: "readers-file-of-reader",
      search: '(_, k) => files[mode === "shared" ? 0 : k]!',
      replace: "(_, k) => files[k]!",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/readers shared and separate/",
  },
  {
    name: "table-read-dev-bytes",
    claim: "table: read_dev_bytes taken from the random phase",
    edits: [{
      marker: "table-read-dev-bytes",
      search: "read_dev_bytes: r.devReadBytes,",
      replace: "read_dev_bytes: x.devReadBytes,",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "table-drop-after-open",
    claim: "table: no drop between the open and the read (an f77 or IEEEIO open caches the file)",
    edits: [{
      marker: "table-drop-after-open",
      search: '? await fencedPhase("drop", () => prepareCache(readPath, cache))',
      replace: "? { seconds: 0, residentAfter: 0 }",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "table-resident-after-drop",
    claim: "table: resident_after_drop measured after the read phases",
    edits: [{
      marker: "table-resident-after-drop",
      search: "resident_after_drop: drop1.residentAfter,",
      replace: "resident_after_drop: residency(path),",
    }],
    imports: [{ names: ["residency"], from: "lib/io/cache.ts" }],
    tests: ["tests/audit_test.ts"],
    filter: "/table rows of every native|phase they describe/",
  },
  {
    name: "records-resident-after-drop",
    claim: "records: resident_after_drop measured after the read",
    edits: [{
      marker: "records-resident-after-drop",
      search: "residentAfterDrop: drop.residentAfter,",
      replace: "residentAfterDrop: residency(readPath),",
    }],
    tests: ["tests/audit_test.ts"],
    filter: "/records rows/",
  },
  {
    name: "mpi-latency-merged",
    claim: "MPI: the aggregate row's latency percentiles are rank 0's, not the merged histogram's",
    edits: [{
      marker: "mpi-latency-merged",
      search: "latencyFields(phase, merged, slowest)",
      replace: "latencyFields(phase, parts[0]!, slowest)",
    }],
    tests: ["tests/latency_test.ts"],
    filter: "/under MPI/",
  },
  {
    name: "pread-latency-recorded",
    claim: "read phases: the pread calls' latencies are not recorded",
    edits: [{
      marker: "pread-latency-recorded",
      search: "if (preadLatency !== undefined) preadLatency.record(clockGettime() - t0);",
      replace: "",
    }],
    tests: ["tests/latency_test.ts"],
    filter: "/table run/",
  },
  {
    name: "table-latency-per-frame",
    claim: "table: the read phases record no frame read's latency",
    edits: [{
      marker: "table-verified-reads",
      search:
        "await readVerifiedFrames(source, order, frames, after, overlap, spent, latency, queue);",
      replace:
        "await readVerifiedFrames(source, order, frames, after, overlap, spent, undefined, queue);",
    }],
    tests: ["tests/latency_test.ts"],
    filter: "/table run/",
  },
  {
    name: "overlap-read-ahead",
    claim: "overlap: frame k + 1 read only after frame k is visited (serial reads)",
    edits: [{
      marker: "overlap-read-ahead",
      search:
        "next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;\n      const seen = visit(order[k]!, chunks, k);\n      if (seen) await seen;",
      replace:
        "const seen = visit(order[k]!, chunks, k);\n      if (seen) await seen;\n      next = k + 1 < n ? readAsync(order[k + 1]!) : undefined;",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/is in flight while/",
  },
  {
    name: "table-overlap-reads",
    claim: "table --overlap: the read phases without overlapped reads",
    edits: [{
      marker: "table-verified-reads",
      search:
        "await readVerifiedFrames(source, order, frames, after, overlap, spent, latency, queue);",
      replace:
        "await readVerifiedFrames(source, order, frames, after, false, spent, latency, queue);",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/on another thread/",
  },
  {
    name: "table-cli-overlap",
    claim: "table: --overlap not passed from the command line",
    edits: [{
      marker: "table-cli-overlap",
      search: 'overlap: overlap.mode !== "none",',
      replace: "",
    }],
    tests: ["tests/overlap_test.ts"],
    filter: "/on another thread/",
  },
  {
    name: "aio-wait-in-flight",
    claim: "aio: the read in flight not waited for before the next is submitted",
    edits: [{
      marker: "aio-wait-in-flight",
      search: "inFlight?.wait();\n  let id = ++lastReadId;",
      replace: "let id = ++lastReadId;",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/queue depth 1/",
  },
  {
    name: "aio-queue-depth",
    claim: "aio: a frame's --bs reads submitted all at once (queue depth 2 and more)",
    edits: [{
      marker: "aio-wait-in-flight",
      search: "inFlight?.wait();\n  let id = ++lastReadId;",
      replace: "let id = ++lastReadId;",
    }, {
      marker: "transfer-submit-first",
      search: "read = first && this.#file.preadSubmit(first, this.#hi);",
      replace:
        "read = first && this.#file.preadSubmit(first, this.#hi);\n      for (let h = this.#hi + (first?.length ?? 0); first && h < limit; h += this.#bs) {\n        const end = Math.min(h + this.#bs, limit);\n        this.#file.preadSubmit(this.#buf.subarray(h - this.#lo, end - this.#lo), h);\n      }",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/one read in flight/",
  },
  {
    name: "aio-reap",
    claim: "aio: a read's result given without waiting for it (io_getevents skipped)",
    edits: [{
      marker: "aio-reap",
      search: "if (this.#buf !== undefined) this.#reap();",
      replace:
        "if (this.#buf !== undefined) {\n      inFlight = undefined;\n      this.#buf = undefined;\n      this.#count = Number(iocb.getBigUint64(32, true));\n    }",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/one read in flight|waited for when asked/",
  },
  {
    name: "fio-same-engine",
    claim: "--baseline fio: fio writes and reads with psync whatever engine ours used",
    edits: [{
      marker: "fio-same-engine",
      search: '`--ioengine=${cell.engine ?? "psync"}`,',
      replace: '"--ioengine=psync",',
    }],
    tests: ["tests/baseline_test.ts"],
    filter: "/through our engine/",
  },
  {
    name: "fio-write-depth",
    claim: "table --baseline fio --iodepth N --engine E: fio writes with psync, one at a time",
    edits: [{
      marker: "fio-same-engine",
      search: '`--ioengine=${cell.engine ?? "psync"}`,',
      replace: '`--ioengine=${phase === "write" ? "psync" : cell.engine ?? "psync"}`,',
    }, {
      marker: "fio-write-depth",
      search: "if ((cell.iodepth ?? 1) > 1)",
      replace: 'if ((cell.iodepth ?? 1) > 1 && phase !== "write")',
    }],
    tests: ["tests/baseline_test.ts", "tests/iodepth_table_test.ts"],
    filter: "/through our engine/",
  },
  {
    name: "fio-depth-write-block",
    claim: "table --baseline fio --iodepth N: fio writes one frame per call, ours 4 MiB transfers",
    edits: [{
      marker: "fio-depth-write-block",
      search: "&& options.queue === undefined",
      replace: "",
    }],
    tests: ["tests/iodepth_table_test.ts"],
    filter: "/4 MiB requests, and so are fio's blocks/",
  },
  {
    name: "table-write-depth",
    claim: "table --iodepth N --engine E: the write phase one pwrite at a time whatever N",
    edits: [{
      marker: "table-write-depth",
      search: "queue: writeQueue,",
      replace: "queue: undefined,",
    }],
    tests: ["tests/iodepth_table_test.ts"],
    filter: "/the write phase at depth 8|writes submitted before one is reaped/",
  },
  {
    name: "queue-depth",
    claim: "read --iodepth N: one request in flight at a time, whatever N",
    edits: [{
      marker: "queue-depth",
      search: "while (prepared + q.inFlight < depth) {",
      replace: "while (prepared + q.inFlight < 1) {",
    }],
    tests: ["tests/iodepth_test.ts"],
    filter: "/depth 8 through libaio/",
  },
  {
    name: "libaio-buffered-refused",
    claim: "read --engine libaio without --direct: run (synchronous AIO, depth 1) not refused",
    edits: [{
      marker: "libaio-buffered-refused",
      search: 'if (engine === "libaio" && !values.direct) {',
      replace: 'if (engine === "libaio" && values.direct === undefined && false) {',
    }],
    tests: ["tests/iodepth_test.ts"],
    filter: "/libaio without --direct/",
  },
  {
    name: "aio-wait-at-submit",
    claim: "aio: the wait made at once, at the submission (no overlap)",
    edits: [{
      marker: "aio-wait-at-submit",
      search: "inFlight = read;\n  return read;",
      replace: "inFlight = read;\n  read.wait();\n  return read;",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/while frame k is visited/",
  },
  {
    name: "direct-aio-default",
    claim: "table --direct: the reads serial by default (no native AIO)",
    edits: [{
      marker: "direct-aio-default",
      search: 'if (why === undefined) return { mode: "aio" };',
      replace: 'if (why === undefined) return { mode: "none" };',
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/one read in flight/",
  },
  {
    name: "aio-setup-failure",
    claim: "aio: a failed io_setup taken for a working context (no line says so)",
    edits: [{
      marker: "aio-setup-failure",
      search: "if (Number(rc) === 0) aioContext = { id: aioCtxId[0]! };",
      replace: "if (Number(rc) <= 0) aioContext = { id: aioCtxId[0]! };",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/io_setup fails/",
  },
  {
    name: "records-direct-aio",
    claim: "records --direct: the records read one after the other (no native AIO)",
    edits: [{
      marker: "records-direct-aio",
      search: "return signalPoint();\n        },\n        overlap,\n        latency,",
      replace: "return signalPoint();\n        },\n        false,\n        latency,",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/records --direct/",
  },
  {
    name: "records-iodepth",
    claim: "records --iodepth N: the records read one request at a time whatever N",
    edits: [{
      marker: "records-iodepth",
      search: "queue,\n    (g, chunks, r) => {",
      replace: "{ ...queue, depth: 1 },\n    (g, chunks, r) => {",
    }],
    tests: ["tests/iodepth_records_test.ts"],
    filter: "/records iodepth: .* at depth 8/",
  },
  {
    name: "engine-refused-every-rank",
    claim:
      "MPI: a rank whose kernel refuses io_uring reads with psync alone, silently, while the " +
      "aggregate row says io_uring",
    edits: [{
      marker: "engine-refused-every-rank",
      search: "if (w.size === 1) return why;",
      replace: "if (w.size >= 1) return why;",
    }],
    tests: ["tests/mpi_iodepth_test.ts"],
    filter: "/refuses io_uring/",
  },
  {
    name: "write-queue-depth",
    claim: "records --iodepth N: the write phase's transfers one request at a time whatever N",
    edits: [{
      marker: "write-queue-depth",
      search: "if (q.inFlight >= q.depth) this.#reap(q, 1);",
      replace: "if (q.inFlight >= 1) this.#reap(q, 1);",
    }],
    tests: ["tests/iodepth_records_test.ts"],
    filter: "/the write phase at depth 8/",
  },
  {
    name: "readers-iodepth",
    claim: "readers --iodepth N: each reader reads one request at a time whatever N",
    edits: [{
      marker: "readers-iodepth",
      search: "source.readFramesQueued(order, s.queue,",
      replace: "source.readFramesQueued(order, { ...s.queue, depth: 1 },",
    }],
    tests: ["tests/iodepth_readers_test.ts"],
    filter: "/readers iodepth: depth 8 through io_uring: every reader/",
  },
  {
    name: "read-verify-direct-aio",
    claim: "read --verify --direct: the frames read one after the other (no native AIO)",
    edits: [{
      marker: "read-verify-direct-aio",
      search:
        'const overlap = settings.verify && readOverlap(transfer, undefined).mode !== "none";',
      replace: "const overlap = settings.verify && transfer === undefined;",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/read --verify --direct/",
  },
  {
    name: "table-verify-off",
    claim: "table: verification turned off",
    edits: [{
      marker: "table-verified-reads",
      search:
        "await readVerifiedFrames(source, order, frames, after, overlap, spent, latency, queue);",
      replace:
        "await readFramesOverlapped(order, nativeReads(source), (_i, _got, k) => after(k), overlap, latency);",
    }],
    imports: [{
      names: ["nativeReads", "readFramesOverlapped"],
      from: "lib/backends/overlap.ts",
    }],
    tests: ["tests/cli_test.ts"],
    filter: "/verify-on-read/",
  },
  {
    name: "table-expected-stamp",
    claim: "table frames: the big-endian expected bytes keep a stale per-frame stamp",
    edits: [{
      marker: "table-expected-stamp",
      search: 'new DataView(bytes.buffer).setFloat32(0, i, order === "little");',
      replace: "void i;",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/bytesIn|names the file offset/",
  },
  {
    name: "table-expected-untimed",
    claim: "table: the big-endian expected bytes made inside the timed read phase",
    edits: [{
      marker: "table-expected-untimed",
      search: "prepareVerified(source, frames);",
      replace: "void prepareVerified;",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads/",
  },
  {
    name: "read-expected-untimed",
    claim: "read --verify: the big-endian expected bytes made inside the timed read phase",
    edits: [{
      marker: "read-expected-untimed",
      search: "if (pattern) prepareVerified(source, pattern);",
      replace: "void prepareVerified;",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads/",
  },
  {
    name: "netcdf-big-endian",
    claim:
      "netcdf: the index does not say its files are big-endian (nothing made before the reads)",
    edits: [{
      marker: "netcdf-order",
      search: 'readonly order: ByteOrder = "big";',
      replace: 'readonly order?: ByteOrder;\n  readonly #big: ByteOrder = "big";',
    }, {
      marker: "netcdf-frame-order",
      search: "order: this.order,",
      replace: "order: this.#big,",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/expected bytes are made before the timed reads|prepareVerified/",
  },
  {
    name: "verify-stored-big-endian",
    claim: "verify: a stored big-endian chunk compared with the native expected bytes",
    edits: [{
      marker: "verify-stored-big-endian",
      search: "if (g.order === NATIVE_ORDER) return chunkBytes(chunks[k]!);",
      replace: "return chunkBytes(chunks[k]!);",
    }],
    tests: ["tests/verify_test.ts"],
    filter: "/readFrameStored: the file's big-endian/",
  },
  {
    name: "readers-gfortran-cold",
    claim:
      "readers: gfortran's rd reads a cached file where sciobench's reader reads a dropped one",
    edits: [{
      marker: "readers-cold-drop",
      search:
        'else if (cache === "cold") resident = Math.max(resident, dropCache(path).residentAfter);',
      replace:
        'else if (cache === "cold" && o.reader !== "gfortran") {\n      resident = Math.max(resident, dropCache(path).residentAfter);\n    }',
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/measured alike on a cold cell/",
  },
  {
    name: "readers-read-twice",
    claim: "readers: sciobench's reader reads the file twice",
    edits: [{
      marker: "readers-read-twice",
      search: "const source = backend.openReader(path, {\n        layout: packmanLayout(s.length),",
      replace:
        "const twice = backend.openReader(path, { layout: packmanLayout(s.length), endian: s.endian, backendOptions: s.backendOptions });\n      for (let f = 0; f < twice.frameCount; f++) twice.readFrame(f);\n      twice.close();\n      const source = backend.openReader(path, {\n        layout: packmanLayout(s.length),",
    }],
    tests: ["tests/observer_test.ts"],
    filter: "/measured alike on a cold cell/",
  },
  {
    name: "file-read-ramp",
    claim: "file handle: the first large read made whole (no 128 KiB start for the readahead)",
    edits: [{
      marker: "file-read-ramp",
      search: "if (this.#ramped || buf.length < RAMP_MIN_BYTES) return buf;",
      replace: "if (this.#ramped || buf.length < RAMP_MIN_BYTES || buf.length > 0) return buf;",
    }],
    tests: ["tests/file_test.ts"],
    filter: "/its first read of 1 MiB or more/",
  },
  {
    name: "cold-scan-first-read",
    claim: "cold scan: the first read through the mapping (a fault reads a readahead window)",
    edits: [{
      marker: "cold-scan-first-read",
      search: "if (far && first) return this.#firstRead(offset, length);",
      replace: 'if (far && first && this.#lease === "off") return this.#firstRead(offset, length);',
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name: "cold-scan-sparse-read",
    claim: "cold scan: a large record's far marker read leaves its page cached",
    edits: [{
      marker: "cold-scan-sparse-read",
      search: "if (far && sparse) return this.#sparseRead(offset, length);",
      replace: "if (far && sparse) return this.#farRead(offset, length);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name: "uncached-dontcache",
    claim: "uncached read: preadv2 without RWF_DONTCACHE",
    edits: [{
      marker: "uncached-dontcache",
      search: "return preadv2Once(fd, buf, offset, path, address, RWF_DONTCACHE);",
      replace: "return preadv2Once(fd, buf, offset, path, address, 0);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/cold scan of records over 1 MiB apart/",
  },
  {
    name: "open-scan-cachestat",
    claim:
      "open scan: the first read no page-cache probe (a cachestat asks whether its window is cached)",
    edits: [{
      marker: "open-scan-cachestat",
      search: "this.#warmWindow = Math.floor(offset / WINDOW);\n    this.#warm = n === length;",
      replace: "this.#warm = n === length;",
    }],
    tests: ["tests/open_syscalls_test.ts"],
    filter: "/f77 warm open of records over 1 MiB apart/",
  },
  {
    name: "open-scan-dense-copy",
    claim: "open scan: a cached file's dense records mapped, not copied (page faults a record)",
    edits: [{
      marker: "open-scan-dense-copy",
      search: "if (near && !this.#released && this.#cached(offset)) return this.#copied(",
      replace: "if (near && this.#released && this.#cached(offset)) return this.#copied(",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/dense records are read from one copy window/",
  },
  {
    name: "open-scan-copy-window",
    claim: "open scan: a new copy window every open (a new 4 MiB array faulted in)",
    edits: [{
      marker: "open-scan-copy-window",
      search: "const copy = spareCopy ?? new Uint8Array(WINDOW + OVERLAP);",
      replace: "const copy = new Uint8Array(WINDOW + OVERLAP);",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/dense records are read from one copy window/",
  },
  {
    name: "open-scan-read-ahead",
    claim: "open scan: a far record's marker one pread each, never read ahead in one io_submit",
    edits: [{
      marker: "open-scan-read-ahead",
      search: "if (p > 0) ahead.readAhead(p, this.#file.fd, this.size, this.path);",
      replace: "if (p < 0) ahead.readAhead(p, this.#file.fd, this.size, this.path);",
    }],
    tests: ["tests/open_syscalls_test.ts"],
    filter: "/the next ones read ahead in one io_submit/",
  },
  {
    name: "pread-many-count",
    claim: "preadMany: a read's count reported one short",
    edits: [{
      marker: "pread-many-count",
      search: "counts[k] = manyEventsSigned[e * 8 + 5]! * TWO32 + manyEvents[e * 8 + 4]!;",
      replace: "counts[k] = manyEventsSigned[e * 8 + 5]! * TWO32 + manyEvents[e * 8 + 4]! - 1;",
    }],
    tests: ["tests/aio_test.ts"],
    filter: "/preadMany/",
  },
  {
    name: "read-buffer-reuse",
    claim: "read buffers: a new buffer every open (its pages first touched inside the timed read)",
    edits: [{
      marker: "spare-read-buffer",
      search: "return best >= 0 ? spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE, true);",
      replace: "return alignedBytes(bytes, PAGE, true);",
    }],
    tests: ["tests/read_place_test.ts"],
    filter: "/a closed source's buffer serves the next source's reads/",
  },
  {
    name: "open-scan-far-buffer",
    claim: "open scan: a new far reads' buffer every open (its address looked up again)",
    edits: [{
      marker: "open-scan-far-buffer",
      search: "if (far !== undefined) {",
      replace: "if (far !== undefined && far.bytes.length < 0) {",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/goes from a released source/",
  },
  {
    name: "open-scan-near-preads",
    claim:
      "open scan: a cached file mapped at its first near window (a detection's lease and mmap)",
    edits: [{
      marker: "open-scan-near-preads",
      search: "const NEAR_PREADS = 4;",
      replace: "const NEAR_PREADS = 0;",
    }],
    tests: ["tests/open_scan_test.ts", "tests/mapped_test.ts"],
    filter: "/detection by preads|reused buffer/",
  },
  {
    name: "open-scan-far-array",
    claim: "open scan: a new array for every far read of a cached file",
    edits: [{
      marker: "open-scan-far-array",
      search: "if (buf === undefined || buf.length !== length) {",
      replace: "if (buf === undefined || buf.length !== length || length > 0) {",
    }],
    tests: ["tests/mapped_test.ts"],
    filter: "/reused buffer/",
  },
  {
    name: "ieeeio-offsets-grow",
    claim: "ieeeio index: a doubled first block of dataset offsets loses what it held",
    edits: [{ marker: "ieeeio-offsets-grow", search: "o.set(offsets);", replace: "" }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/4500 frames/",
  },
  {
    name: "ieeeio-attributes-grow",
    claim: "ieeeio index: a doubled first block of frame_datasets attributes loses what it held",
    edits: [{ marker: "ieeeio-attributes-grow", search: "next.set(block!);", replace: "" }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/4500 frames/",
  },
  {
    name: "f77-detect-head",
    claim: "open scan: an f77 detection reads the leading markers again past its head",
    edits: [{
      marker: "f77-detect-head",
      search: "if (offset + w <= this.head.length) {",
      replace: "if (offset + w <= this.head.length && offset > 0) {",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "f77-detect-ahead",
    claim: "open scan: an f77 detection's trailing markers one pread each",
    edits: [{
      marker: "f77-detect-ahead",
      search: "const DETECT_AHEAD = 16;",
      replace: "const DETECT_AHEAD = 8;",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "f77-scan-seed",
    claim: "open scan: the f77 scan reads again what the detection read",
    edits: [{
      marker: "f77-scan-seed",
      search: "if (reads !== undefined) rd.seed(reads.head, reads.far);",
      replace: "",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/detection by preads/",
  },
  {
    name: "ieeeio-head-peek",
    claim: "open scan: IEEEIO's file header and first peek two reads",
    edits: [{
      marker: "ieeeio-head-peek",
      search: "const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES + PEEK_BYTES);",
      replace: "const headBytes = Math.min(size, IEEEIO_FILE_HEADER_BYTES);",
    }],
    tests: ["tests/open_scan_test.ts"],
    filter: "/one 256-byte pread a dataset/",
  },
  {
    name: "ieeeio-shape-intern",
    claim: "ieeeio shapes: a shape past the first 8 met again made anew (no longer interned)",
    edits: [{
      marker: "ieeeio-shape-intern",
      search: "let id = this.#ids.get(key);",
      replace: 'let id = this.#ids.get(key + " ");',
    }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/a shape met again is the one copy/",
  },
  {
    name: "ieeeio-name-intern",
    claim: "ieeeio names: a name an earlier open met taken for another of its length",
    edits: [{
      marker: "ieeeio-name-intern",
      search: "if (p.bytes.length === length && sameBytesAt(bytes, view, at, p)) {",
      replace: "if (p.bytes.length === length) {",
    }],
    tests: ["tests/ieeeio_test.ts"],
    filter: "/an earlier open met/",
  },
  {
    name: "columns-grow",
    claim: "columns: a doubled first block loses what it held",
    edits: [{
      marker: "columns-grow",
      search: "if (old !== undefined) block.set(old);",
      replace: "",
    }],
    tests: ["tests/columns_test.ts"],
    filter: "/number columns/",
  },
  {
    name: "direct-huge-pages-advise",
    claim: "--direct: the staging and read buffers not advised huge pages",
    edits: [{
      marker: "direct-huge-pages-advise",
      search: "adviseHugePages(raw.subarray(skip, skip + whole));",
      replace: "",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/every read and write buffer is advised/",
  },
  {
    name: "direct-reader-huge-pages",
    claim: "--direct: the block reader's buffers in 4 KiB pages",
    edits: [{
      marker: "direct-reader-huge-pages",
      search: "this.#hugePages = t.hugePages;\n    this.#size = t.file.size;",
      replace: "this.#hugePages = false;\n    this.#size = t.file.size;",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/every read and write buffer is advised/",
  },
  {
    name: "buffered-huge-pages",
    claim: "buffered: the write batcher's and the read buffers in 4 KiB pages",
    edits: [{
      marker: "batcher-spare-buffer",
      search: "const buf = takeSpareBuffer(this.#capacity).subarray(0, this.#capacity);",
      replace: "const buf = new Uint8Array(this.#capacity);",
    }, {
      marker: "spare-read-buffer",
      search: "spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE, true);",
      replace: "spares.splice(best, 1)[0]! : alignedBytes(bytes, PAGE);",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/buffered table: the write batcher's/",
  },
  {
    name: "gsd-reference-huge-pages",
    claim: "gsd writer: frame 0's HOOMD reference in new 4 KiB pages (faulted in inside the write)",
    edits: [{
      marker: "gsd-reference-huge-pages",
      search: "const bytes = takeSpareBuffer(data.byteLength);",
      replace: "const bytes = new Uint8Array(data.byteLength);",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/keepCopy/",
  },
  {
    name: "gsd-kept-give-back",
    claim: "gsd writer: the kept copy's buffer not given back at close (a new one every cell)",
    edits: [{
      marker: "gsd-kept-give-back",
      search: "for (const buf of this.#kept.splice(0)) giveBackSpareBuffer(buf);",
      replace: "this.#kept.splice(0);",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/no new huge buffer per cell/",
  },
  {
    name: "batcher-give-back",
    claim: "write batcher: its buffers not given back once written (a new 4 MiB one every cell)",
    edits: [{ marker: "batcher-give-back", search: "giveBackSpareBuffer(r.buf);", replace: "" }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/no new huge buffer per cell/",
  },
  {
    name: "gsd-reference-copy",
    claim:
      "gsd writer: frame 0's HOOMD reference aliases the caller's arrays (later frames left out)",
    edits: [{
      marker: "gsd-reference-copy",
      search: "if (data.byteLength < HUGE_PAGES_MIN) return data.slice() as T;",
      replace: "if (data.byteLength >= 0) return data;",
    }],
    tests: ["tests/gsd_test.ts"],
    filter: "/HOOMD reference is a copy/",
  },
  {
    name: "fio-huge-pages",
    claim: "--baseline fio: fio not given huge pages where the machine allows",
    edits: [{
      marker: "fio-huge-pages",
      search: 'if (cell.hugePages) args.push("--mem=shmhuge");',
      replace: "",
    }],
    tests: ["tests/huge_pages_test.ts"],
    filter: "/mem=shmhuge exactly when/",
  },
  {
    name: "table-alternate-order",
    claim: "table: the backends measured in the same order in every repeat (order bias)",
    edits: [{
      marker: "table-alternate-order",
      search: "return rep % 2 === 1 ? all : [...all].reverse();",
      replace: "return all;",
    }],
    tests: ["tests/table_order_test.ts"],
    filter: "/order alternates|rows say their place|records order/",
  },
  {
    name: "table-warm-up",
    claim: "table: no untimed warm-up, the first backend pays V8's compilation in its phases",
    edits: [{
      marker: "table-warm-up",
      search: "await warmUpBackends(all, options);",
      replace: "",
    }],
    tests: ["tests/table_order_test.ts"],
    filter: "/rows say their place/",
  },
  {
    name: "table-heap-settle",
    claim: "table: V8's first major collection is left to fall in the first timed phases",
    edits: [{
      marker: "table-heap-settle",
      search: "await settleHeapUntimed();",
      replace: "",
    }],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/table's warm-up runs V8/",
  },
  {
    name: "records-heap-settle",
    claim: "records: V8's first major collection is left to fall in the first cell's timed phases",
    edits: [{
      marker: "records-heap-settle",
      search: "await settleHeapUntimed();",
      replace: "",
    }],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/records runs V8/",
  },
  {
    name: "heap-settle-touch",
    claim: "the heap settle leaves the young generation's new pages to the first timed phase",
    edits: [{
      marker: "heap-settle-touch",
      search: "sink += new Array<number>(ARRAY_LENGTH).fill(i).length;\n  }\n  return",
      replace: "}\n  return",
    }],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/touches no new heap pages/",
  },
  {
    name: "table-warm-up-progress",
    claim: "table: the warm-ups read without a Progress, the first timed read deoptimizes",
    edits: [
      {
        marker: "table-warm-up-progress",
        search:
          'await readAsPhase(source, order, frames, UNTIMED_PROGRESS, "read", overlap, queue);',
        replace:
          'await readAsPhase(source, order, frames, undefined as unknown as Progress, "read", overlap, queue);',
      },
    ],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/no read or random phase runs deoptimized/",
  },
  {
    name: "audit-exercise",
    claim: "the audit recorder is not exercised at load: the first timed read deoptimizes in it",
    edits: [{ marker: "audit-exercise", search: "exerciseRecorder();\n", replace: "\n" }],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/no read or random phase runs deoptimized/",
  },
  {
    name: "read-heap-settle",
    claim: "read: V8's first major collection is left to fall in the timed phases",
    edits: [{
      marker: "read-heap-settle",
      search: "await settleHeapUntimed();",
      replace: "",
    }],
    tests: ["tests/heap_settle_test.ts"],
    filter: "/read's warm-up runs V8/",
  },
  {
    name: "warm-up-leave-together",
    claim:
      "table warm-up under MPI: a rank removes the shared scratch directory while another still works in it",
    edits: [{
      marker: "warm-up-leave-together",
      search: "world().barrier();",
      replace: "",
    }],
    tests: ["tests/mpi_table_test.ts"],
    filter: "/shared warm-up directory/",
  },
  {
    name: "table-io-rate-excludes-verify",
    claim: "table: the io rates include the verification (not like with like against fio)",
    edits: [{
      marker: "table-io-rate-excludes-verify",
      search: 'row[rate] = bytes > 0 && io > 0 ? bytes / 2 ** 20 / io : "";',
      replace: "row[rate] = bytes / 2 ** 20 / Number(row[seconds]);",
    }],
    tests: ["tests/table_order_test.ts"],
    filter: "/io rates|rows say their place/",
  },
  {
    name: "fio-efficiency-io-rate",
    claim: "--baseline fio: the read efficiencies compare fio with our verified rates",
    edits: [{
      marker: "fio-efficiency-io-rate",
      search: "row.efficiency_read = Number(row.read_io_MiBps) / fio.readMiBps;",
      replace: "row.efficiency_read = Number(row.read_MiBps) / fio.readMiBps;",
    }],
    tests: ["tests/table_order_test.ts"],
    filter: "/efficiencies compare the io rates/",
  },
  {
    name: "summary-ratio-of-means",
    claim: "summary rows: an efficiency's mean is the mean of the runs' ratios, not of the rates",
    edits: [{
      marker: "summary-ratio-of-means",
      search: "row[name] = statistic(stat, top as number[]) / statistic(stat, bottom as number[]);",
      replace: "",
    }],
    tests: ["tests/summary_test.ts"],
    filter: "/ratio of the mean rates/",
  },
  {
    name: "read-warm-up",
    claim: "read: the read path runs unwarmed (V8 compiles it inside the first timed phase)",
    edits: [{
      marker: "read-warm-up",
      search: "await warmUpRead(framing, settings);",
      replace: "",
    }],
    tests: ["tests/read_warm_up_test.ts"],
    filter: "/read path warmed/",
  },
  {
    name: "queue-reserve-touch",
    claim: "the queue's reserved buffers are not touched: their pages fault in the timed phase",
    edits: [{ marker: "queue-reserve-touch", search: "buf.fill(0);", replace: "" }],
    tests: ["tests/iodepth_test.ts"],
    filter: "/fault no page/",
  },
  {
    name: "queue-keep-idle",
    claim: "a closed kernel queue is destroyed: every phase pays io_destroy's RCU grace period",
    edits: [{
      marker: "queue-keep-idle",
      search: "if (q.preparedCount > 0 || idleQueues.length >= IDLE_QUEUES) {",
      replace: "if (true) {",
    }],
    tests: ["tests/queue_test.ts"],
    filter: "/is kept for its engine/",
  },
];
