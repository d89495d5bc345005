/**
 * An independent observer of what is measured: small `table`, `readers`, `records` and `scaling`
 * runs under `strace -f`, checking that the kernel saw what each row's audit trail says: the
 * fsync of each written file after its last write and before its first drop; a
 * POSIX_FADV_DONTNEED of the file before each cold read phase; read offsets in order in the
 * sequential phase and out of order in the random one (the same reads, offset for offset, as the
 * trail's log); one file per reader process in `separate` mode and one for all in `shared`; no
 * writes to the files while they are read. It also sees what the trail cannot: the reads and
 * writes HDF5 makes inside its own library.
 *
 * strace follows every thread (-ff, one output file per thread, so Deno's other threads never
 * split a line), names each descriptor's file (-y), and stamps each call (-ttt) so calls of
 * different processes can be ordered. Skipped with a message where strace is missing; a failure
 * under SCIOBENCH_REQUIRE_PEERS=1.
 * @module
 */
import assert from "node:assert/strict";
import type { AuditPhase, RowAudit } from "../lib/sys/audit.ts";
import { gfortranUnavailable } from "../lib/peers/gfortran/mod.ts";
import { hdf5 } from "../lib/peers/hdf5/mod.ts";
import { commandMissing, peerTest, PERMISSIONS, tempDir } from "./_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** One system call on a file under the scratch directory. */
interface Call {
  /** Thread (for a process's main thread: the process) id. */
  readonly tid: number;
  /** Seconds since the epoch (-ttt). */
  readonly t: number;
  readonly call: string;
  readonly path: string;
  /** pread64/pwrite64: bytes asked, offset, bytes done; fadvise64: the advice. */
  readonly count: number;
  readonly offset: number;
  readonly ret: number;
  readonly advice: string;
}

const LINE =
  /^(\d+\.\d+) (openat|pread64|preadv2|read|lseek|pwrite64|write|fsync|fdatasync|fadvise64)\((.*)\) = (-?\d+)/;
/** The calls traced unless a test asks for more. */
const CALLS = "openat,pread64,pwrite64,write,fsync,fdatasync,fadvise64";

/** Parses strace's per-thread files `prefix.TID`, keeping calls on paths under `under`. */
function parseTrace(traceDir: string, under: string): Call[] {
  const calls: Call[] = [];
  for (const entry of Deno.readDirSync(traceDir)) {
    const tid = Number(entry.name.slice(entry.name.lastIndexOf(".") + 1));
    for (const line of Deno.readTextFileSync(`${traceDir}/${entry.name}`).split("\n")) {
      const m = LINE.exec(line);
      if (!m) continue;
      const [, t, call, argText, ret] = m;
      let path: string;
      let rest: string[];
      if (call === "openat") {
        const p = /"([^"]*)"/.exec(argText!);
        if (!p) continue;
        path = p[1]!;
        rest = [];
      } else {
        const p = /^\d+<([^>]*)>/.exec(argText!);
        if (!p) continue;
        path = p[1]!;
        rest = argText!.slice(p[0].length).split(", ").slice(1);
      }
      if (!path.startsWith(under)) continue;
      const rw = call === "pread64" || call === "pwrite64";
      // preadv2(fd, [...], 1, OFFSET, FLAGS) (its count is the one vector's: the result's);
      // lseek(fd, OFFSET, WHENCE) = the new position
      const v2 = call === "preadv2" ? /\], 1, (\d+), /.exec(argText!) : null;
      calls.push({
        tid,
        t: Number(t),
        call: call!,
        path,
        count: rw ? Number(rest.at(-2)) : v2 ? Number(ret) : 0,
        offset: rw ? Number(rest.at(-1)) : v2 ? Number(v2[1]) : call === "lseek" ? Number(ret) : 0,
        ret: Number(ret),
        advice: call === "fadvise64" ? rest.at(-1)! : "",
      });
    }
  }
  return calls.sort((a, b) => a.t - b.t);
}

interface Traced {
  readonly rows: (Record<string, unknown> & { audit: RowAudit })[];
  readonly calls: Call[];
}

/** Runs `sciobench ARGS --dir D --format json --audit` under strace; its rows and calls on D. */
async function traced(args: string[], more: readonly string[] = []): Promise<Traced> {
  using scratch = tempDir("sciobench-observed-");
  using trace = tempDir("sciobench-strace-");
  const out = await new Deno.Command("strace", {
    args: [
      "-f",
      "-ff",
      "-qq",
      "-y",
      "-ttt",
      "-s",
      "0",
      "-e",
      `trace=${[CALLS, ...more].join(",")}`,
      "-o",
      `${trace.path}/tr`,
      Deno.execPath(),
      "run",
      "--quiet",
      ...PERMISSIONS,
      MAIN,
      ...args,
      "--dir",
      scratch.path,
      "--format",
      "json",
      "--audit",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `strace ... sciobench ${args.join(" ")}: ${stderr}`);
  const rows = JSON.parse(new TextDecoder().decode(out.stdout)).rows as Traced["rows"];
  return { rows, calls: parseTrace(trace.path, scratch.path) };
}

const isRead = (c: Call) => c.call === "pread64";
const isWrite = (c: Call) => c.call === "pwrite64" || c.call === "write";
const isDrop = (c: Call) => c.call === "fadvise64" && c.advice === "POSIX_FADV_DONTNEED";

function timed(a: RowAudit, name: string): AuditPhase {
  const p = a.phases.find((x) => x.timed && x.name === name);
  assert.ok(p, `a timed ${name} phase`);
  return p;
}

/** The file's fsync comes after its last write and before its first drop; returns the drops. */
function assertSyncedBeforeDrop(calls: readonly Call[], what: string): number[] {
  const lastWrite = calls.findLastIndex(isWrite);
  const drops = calls.flatMap((c, i) => (isDrop(c) ? [i] : []));
  assert.ok(lastWrite >= 0, `${what}: the kernel saw the file written`);
  const sync = calls.findIndex((c, i) => c.call === "fsync" && i > lastWrite);
  assert.ok(sync > lastWrite, `${what}: an fsync after the last write`);
  if (drops.length > 0) assert.ok(sync < drops[0]!, `${what}: the fsync before the first drop`);
  assert.ok(
    calls.slice(drops[0] ?? calls.length).every((c) => !isWrite(c)),
    `${what}: no writes to the file once it is dropped and read`,
  );
  return drops;
}

/** The reads the trail logged for `path` in `phase`, as [offset, bytes] pairs. */
function loggedReads(phase: AuditPhase, path: string): [number, number][] {
  const f = phase.files.find((x) => x.path === path);
  const log = f?.readLog ?? [];
  const out: [number, number][] = [];
  for (let k = 0; k < log.length; k += 2) out.push([log[k]!, log[k + 1]!]);
  return out;
}

const pairs = (calls: readonly Call[]) => calls.map((c) => [c.offset, c.ret]);

peerTest(
  "observer: strace sees each table row's fsync, drops and reads as its audit trail says",
  () => commandMissing("strace") ?? hdf5.unavailable(),
  async () => {
    const { rows, calls } = await traced([
      "table",
      "--framing",
      "raw,gsd,f77,hdf5",
      "--size",
      "256KiB",
      "--n",
      "32^2",
      "--sample",
      "128KiB",
    ]);
    assert.deepEqual(rows.map((r) => r.framing), ["raw", "gsd", "f77", "hdf5"]);
    for (const row of rows) {
      const what = `table ${row.framing}`;
      const path = timed(row.audit, "write").files.find((f) =>
        f.path.endsWith(`/table.${row.framing}`)
      )!.path;
      const mine = calls.filter((c) => c.path === path);
      const drops = assertSyncedBeforeDrop(mine, what);
      assert.equal(drops.length, 3, `${what}: three drops (before the open, read and random)`);
      const [d1, d2, d3] = drops as [number, number, number];
      const phase0 = mine.slice(d1 + 1, d2).filter(isRead);
      const phase1 = mine.slice(d2 + 1, d3).filter(isRead);
      const phase2 = mine.slice(d3 + 1).filter(isRead);
      assert.ok(phase1.length > 0 && phase2.length > 0, `${what}: reads after each drop`);
      if (row.framing === "hdf5") {
        // The trail cannot see HDF5's own reads; the kernel can.
        assert.equal(timed(row.audit, "read").reads, 0, `${what}: reads are inside libhdf5`);
        continue;
      }
      // The kernel's reads are the trail's: the open's, the sequential and the random phase's,
      // each after its own drop.
      const open = loggedReads(timed(row.audit, "open"), path);
      const seq = loggedReads(timed(row.audit, "read"), path);
      const rnd = loggedReads(timed(row.audit, "random"), path);
      assert.deepEqual(pairs(phase0), open, `${what}: open phase reads`);
      assert.deepEqual(pairs(phase1), seq, `${what}: read phase reads`);
      assert.deepEqual(pairs(phase2), rnd, `${what}: random phase reads`);
      const offs = (x: [number, number][]) => x.map(([o]) => o);
      const s = offs(seq), r = offs(rnd);
      assert.ok(s.every((o, k) => k === 0 || o > s[k - 1]!), `${what}: sequential in order ${s}`);
      assert.ok(r.some((o, k) => k > 0 && o < r[k - 1]!), `${what}: random out of order ${r}`);
    }
  },
);

peerTest(
  "observer: strace sees one file per reader process in separate mode, one for all in shared",
  () => commandMissing("strace"),
  async () => {
    const { rows, calls } = await traced([
      "readers",
      "--reader",
      "sciobench",
      "--procs",
      "2",
      "--mode",
      "shared,separate",
      "--cache",
      "cold",
      "--records",
      "3",
      "--length",
      "2000",
    ]);
    for (const row of rows) {
      const what = `readers ${row.mode}`;
      // The data files (a reader may also read a small warm-up file of its own beforehand).
      const dataFile = new RegExp(`/${row.mode}-\\d+\\.f77$`);
      const mine = calls.filter((c) => dataFile.test(c.path));
      const readers = new Map<number, Set<string>>();
      for (const c of mine.filter(isRead)) {
        readers.set(c.tid, (readers.get(c.tid) ?? new Set()).add(c.path));
      }
      const phase = timed(row.audit, "read");
      assert.deepEqual(
        [...readers.keys()].sort(),
        phase.processes.map((p) => p.pid).sort(),
        `${what}: the kernel's reading processes are the ones the trail names`,
      );
      const files = [...readers.values()].map((s) => {
        assert.equal(s.size, 1, `${what}: each reader process reads one file: ${[...s]}`);
        return [...s][0]!;
      });
      assert.equal(new Set(files).size, row.mode === "shared" ? 1 : 2, `${what}: ${files}`);
      for (const f of new Set(files)) {
        const onFile = mine.filter((c) => c.path === f);
        const drops = assertSyncedBeforeDrop(onFile, `${what} ${f}`);
        const firstRead = onFile.findIndex((c) => isRead(c) && readers.has(c.tid));
        assert.ok(drops.length > 0 && drops[0]! < firstRead, `${what}: ${f} dropped before read`);
        // Records in order in each reader (reads of a record's 16000 bytes: not the open's copy
        // window, which reads the file from a page on, lib/io/mapped.ts).
        for (const tid of readers.keys()) {
          const big = onFile.filter((c) => c.tid === tid && isRead(c) && c.ret === 16000);
          const offs = big.map((c) => c.offset);
          assert.ok(
            offs.every((o, k) => k === 0 || o > offs[k - 1]!),
            `${what}: in order ${big.map((c) => `${c.offset}:${c.ret}`)}`,
          );
        }
      }
    }
  },
);

/**
 * The byte ranges [start, end) each thread read of `path`, in time order: pread64 and preadv2 at
 * their offsets, read at the descriptor's position (0 at the open, set by lseek, moved by reads).
 */
function readRanges(calls: readonly Call[], path: string): Map<number, [number, number][]> {
  const pos = new Map<number, number>();
  const out = new Map<number, [number, number][]>();
  for (const c of calls) {
    if (c.path !== path) continue;
    let at: number;
    if (c.call === "openat" || c.call === "lseek") {
      pos.set(c.tid, c.offset);
      continue;
    } else if (c.call === "read") {
      at = pos.get(c.tid) ?? 0;
      pos.set(c.tid, at + c.ret);
    } else if (c.call === "pread64" || c.call === "preadv2") at = c.offset;
    else continue;
    if (c.ret > 0) out.set(c.tid, [...out.get(c.tid) ?? [], [at, at + c.ret]]);
  }
  return out;
}

peerTest(
  "observer: strace sees sciobench's reader and gfortran's rd measured alike on a cold cell",
  () => commandMissing("strace") ?? gfortranUnavailable(),
  async () => {
    const records = 3, length = 200_000; // records over 1 MiB: the open's scan reads far markers
    const seen: Record<string, unknown>[] = [];
    for (const reader of ["gfortran", "sciobench"]) {
      const what = `readers --reader ${reader}`;
      const { rows, calls } = await traced([
        "readers",
        "--reader",
        reader,
        "--procs",
        "1",
        "--mode",
        "shared",
        "--cache",
        "cold",
        "--records",
        String(records),
        "--length",
        String(length),
      ], ["read", "lseek", "preadv2"]);
      assert.equal(rows.length, 1, what);
      const row = rows[0]!;
      assert.equal(row.reader, reader, what);
      seen.push(row);
      const mine = calls.filter((c) => /\/shared-0\.f77$/.test(c.path));
      const path = mine[0]!.path;
      const size = Number(row.file_bytes);
      const byReader = readRanges(mine, path);
      assert.equal(byReader.size, 1, `${what}: one process reads the file`);
      const [[tid, ranges]] = [...byReader] as [[number, [number, number][]]];
      // cold: the file synced and dropped before the reader's first read of it
      const drops = assertSyncedBeforeDrop(mine, what);
      const first = mine.findIndex((c) => c.tid === tid && /read/.test(c.call));
      assert.ok(drops.length > 0 && drops.at(-1)! < first, `${what}: dropped before it is read`);
      // every record's payload read, no byte twice, the records in order
      const byOffset = [...ranges].sort((a, b) => a[0] - b[0]);
      byOffset.forEach(([start], k) => {
        if (k > 0) assert.ok(start >= byOffset[k - 1]![1], `${what}: byte ${start} read twice`);
      });
      const covered = (a: number, b: number) =>
        byOffset.filter(([s, e]) => e > a && s < b).reduce(
          (n, [s, e]) => n + Math.min(e, b) - Math.max(s, a),
          0,
        );
      for (let k = 0; k < records; k++) {
        const at = k * (length * 8 + 8) + 4;
        assert.equal(covered(at, at + length * 8), length * 8, `${what}: record ${k + 1} read`);
      }
      assert.ok(covered(0, size) <= size, what);
      const big = ranges.filter(([s, e]) => e - s >= 1 << 16).map(([s]) => s);
      assert.ok(big.every((o, k) => k === 0 || o > big[k - 1]!), `${what}: in order ${big}`);
    }
    // the rows say so alike: the same bytes, the same residency before, the same cold verdict
    for (const column of ["file_bytes", "reader_bytes", "resident_before", "cache", "cold_ok"]) {
      assert.equal(seen[0]![column], seen[1]![column], `${column} of gfortran's and ours`);
    }
  },
);

peerTest(
  "observer: strace sees records write with fsync, drop, then read in order; scaling's fsync",
  () => commandMissing("strace"),
  async () => {
    const rec = await traced([
      "records",
      "--framing",
      "raw",
      "--endian",
      "native",
      "--shape",
      "8x32x32",
    ]);
    const read = rec.rows.find((r) => r.phase === "read")!;
    const path = timed(read.audit, "read").files[0]!.path;
    const mine = rec.calls.filter((c) => c.path === path);
    const drops = assertSyncedBeforeDrop(mine, "records raw");
    assert.equal(drops.length, 1);
    const reads = mine.slice(drops[0]! + 1).filter(isRead);
    assert.deepEqual(pairs(reads), loggedReads(timed(read.audit, "read"), path));
    const data = reads.filter((c) => c.ret >= 32 * 32 * 4).map((c) => c.offset);
    assert.equal(data.length, 8);
    assert.ok(data.every((o, k) => k === 0 || o > data[k - 1]!), `records in order ${data}`);

    const sc = await traced([
      "scaling",
      "--framing",
      "raw,f77",
      "--datasets",
      "2",
      "--shape",
      "16x16x16",
      "--fsync",
      "end",
    ]);
    for (const row of sc.rows) {
      const w = timed(row.audit, "write");
      const p = w.files.find((f) => f.path.endsWith(`/speed.${row.framing}`))!.path;
      const mineS = sc.calls.filter((c) => c.path === p);
      assertSyncedBeforeDrop(mineS, `scaling ${row.framing}`);
      assert.equal(
        mineS.filter(isWrite).reduce((a, c) => a + c.ret, 0),
        w.writeBytes,
        `scaling ${row.framing}: the kernel wrote the bytes the trail counted`,
      );
    }
  },
);

peerTest(
  "observer: strace sees --fsync each sync once per frame and --fsync none never",
  () => commandMissing("strace"),
  async () => {
    for (const fsync of ["each", "none"] as const) {
      const { rows, calls } = await traced([
        "table",
        "--framing",
        "raw,f77",
        "--size",
        "128KiB",
        "--n",
        "32^2",
        "--no-warmup",
        "--fsync",
        fsync,
      ]);
      for (const row of rows) {
        const what = `table ${row.framing} --fsync ${fsync}`;
        assert.equal(row.fsync, fsync, what);
        const path = timed(row.audit, "write").files.find((f) =>
          f.path.endsWith(`/table.${row.framing}`)
        )!.path;
        const mine = calls.filter((c) => c.path === path);
        const firstDrop = mine.findIndex(isDrop);
        const written = mine.slice(0, firstDrop);
        const syncs = written.filter((c) => c.call === "fsync");
        if (fsync === "none") {
          assert.equal(syncs.length, 0, `${what}: the kernel saw no fsync`);
          continue;
        }
        // raw: a sync after each frame's pwrite and one after the trailer; f77 has no trailer
        const frames = Number(row.frames);
        assert.equal(syncs.length, frames + (row.framing === "raw" ? 1 : 0), what);
        // between two syncs the kernel saw writes: one sync per frame, none doubled
        const kinds = written.filter((c) => c.call === "fsync" || isWrite(c)).map((c) =>
          c.call === "fsync" ? "s" : "w"
        ).join("");
        assert.doesNotMatch(kinds, /ss/, `${what}: ${kinds}`);
        assert.match(kinds, /s$/, `${what}: the write ends with a sync`);
        assert.equal(
          syncs.length,
          timed(row.audit, "write").syncs.filter((s) => s.call === "fsync").length,
          `${what}: the trail counts the kernel's fsyncs`,
        );
      }
    }
  },
);

/** One tool's phase over one file, as the kernel saw it: its first and last call. */
interface Span {
  readonly label: string;
  readonly from: number;
  readonly to: number;
}

/** The spans of `calls` (one tool's file in one repeat) for a phase: `label`, first to last. */
function span(label: string, calls: readonly Call[]): Span {
  assert.ok(calls.length > 0, `${label}: the kernel saw its calls`);
  return { label, from: calls[0]!.t, to: calls.at(-1)!.t };
}

peerTest(
  "observer: --baseline fio runs each fio phase beside ours, after it in odd repeats and before it in even ones",
  () => commandMissing("strace") ?? commandMissing("fio"),
  async () => {
    const { rows, calls } = await traced(
      "table --framing raw --size 1MiB --n 32^2 --repeat 2 --no-warmup --baseline fio".split(" "),
    );
    const runs = rows.filter((r) => r.stat === "run");
    assert.equal(runs.length, 2);
    for (const row of runs) {
      const ours = timed(row.audit, "write").files.find((f) => f.path.endsWith("/table.raw"))!.path;
      const mine = calls.filter((c) => c.path === ours);
      // fio's file of this repeat: the fio.raw whose writes are nearest ours in time
      const fioPaths = [
        ...new Set(calls.filter((c) => c.path.endsWith("/fio.raw")).map((c) => c.path)),
      ];
      const near = (p: string) => Math.abs(calls.find((c) => c.path === p)!.t - mine[0]!.t);
      const fioPath = fioPaths.sort((a, b) => near(a) - near(b))[0]!;
      const theirs = calls.filter((c) => c.path === fioPath);
      const drops = mine.flatMap((c, i) => (isDrop(c) ? [i] : []));
      assert.equal(drops.length, 3, "our three drops");
      // fio's sequential and random reads are two fio processes, in that order
      const readers = [...new Set(theirs.filter(isRead).map((c) => c.tid))];
      assert.equal(readers.length, 2, "one fio process reads in order, one at random");
      const spans = [
        span("ours write", mine.filter(isWrite)),
        span("ours read", mine.slice(drops[1]! + 1, drops[2]).filter(isRead)),
        span("ours random", mine.slice(drops[2]! + 1).filter(isRead)),
        span("fio write", theirs.filter(isWrite)),
        span("fio read", theirs.filter((c) => isRead(c) && c.tid === readers[0])),
        span("fio random", theirs.filter((c) => isRead(c) && c.tid === readers[1])),
      ].sort((a, b) => a.from - b.from);
      for (let k = 1; k < spans.length; k++) {
        assert.ok(
          spans[k - 1]!.to <= spans[k]!.from,
          `${spans[k - 1]!.label} ends before ${spans[k]!.label}`,
        );
      }
      // fio's random read, like ours, reads each block once (its random map, no repeats from cache)
      const randomOffsets = theirs.filter((c) => isRead(c) && c.tid === readers[1]).map((c) =>
        c.offset
      );
      assert.equal(new Set(randomOffsets).size, randomOffsets.length, "fio reads each block once");
      // fio gives no access hint (fadvise_hint=0), as ours gives none: its only advice is the drop
      assert.deepEqual(
        [
          ...new Set(
            [...mine, ...theirs].filter((c) => c.call === "fadvise64").map((c) => c.advice),
          ),
        ],
        ["POSIX_FADV_DONTNEED"],
        "no POSIX_FADV_SEQUENTIAL or RANDOM on either side",
      );
      const first = row.repeat === 1 ? "ours" : "fio";
      const second = first === "ours" ? "fio" : "ours";
      assert.deepEqual(
        spans.map((s) => s.label),
        ["write", "read", "random"].flatMap((p) => [`${first} ${p}`, `${second} ${p}`]),
        `repeat ${row.repeat}: each phase paired, ${first} first`,
      );
    }
  },
);
