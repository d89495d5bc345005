/**
 * The open's scan of an f77 or IEEEIO file whose records lie far apart (the table's at N =
 * 128^2: records of 192 and 256 KiB), page cache warm (the goal: at most 1 µs a record): one
 * small pread a record boundary (a trailing marker with the next leading one, or a dataset's
 * attribute run with the next dataset's header), and a marker detection's few reads preads too,
 * not a mapping (its lease, mmap and page fault cost more than the reads: bench/open_bench.ts);
 * every read counted in the audit trail.
 * @module
 */
import assert from "node:assert/strict";
import { nativeBackend } from "../lib/backends/engine.ts";
import { writeFrames } from "../lib/backends/write.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { ieeeio } from "../lib/framings/ieeeio/mod.ts";
import type { Framing } from "../lib/framings/types.ts";
import { finishAudit, startAudit } from "../lib/sys/audit.ts";
import { startMeter } from "../lib/sys/meter.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";
import { tempDir } from "./_helpers.ts";

const FRAMES = 12;
/** Chunk bytes of the table's frame at N = 128^2: position (float32 x 3) and orientation (x 4). */
const CHUNKS = [128 * 128 * 12, 128 * 128 * 16];

/**
 * The reads of a warm open of a table file of FRAMES frames at N = 128^2 (the audit trail's
 * log: offset, bytes, offset, bytes ...), after an untimed open (the file cached, as the table's
 * warm open is).
 */
async function warmOpenReads(framing: Framing): Promise<{ log: number[]; reads: number }> {
  using d = tempDir();
  const path = `${d.path}/table.${framing.name}`;
  const frames = new TableFrames(128 * 128, 1);
  const backend = nativeBackend(framing);
  await writeFrames(
    backend,
    path,
    { create: "new", fsync: "none" },
    FRAMES,
    (i) => frames.frame(i),
  );
  backend.openReader(path, { layout: frames.layout }).close();
  startAudit();
  const m = startMeter("open");
  const source = backend.openReader(path, { layout: frames.layout });
  m.stop();
  const trail = finishAudit();
  source.close();
  assert.equal(source.frameCount, FRAMES);
  const open = trail!.phases.find((p) => p.timed && p.name === "open")!;
  assert.equal(open.files.length, 1);
  const [file] = open.files;
  assert.equal(file!.opens, 1);
  return { log: file!.readLog, reads: open.reads };
}

Deno.test("f77 warm open of records 192 and 256 KiB apart: a pread of the two markers a record, detection by preads, in the audit trail", async () => {
  const { log, reads } = await warmOpenReads(f77);
  const records = 2 * FRAMES;
  // the detection: the file's first 64 bytes once (every marker width and byte order's leading
  // marker), then the first record's trailing marker as 4-byte little reads it, in a 16-byte
  // pread that holds the 8-byte little one too (4-byte little fits; 8-byte little and 4-byte big
  // do not; 8-byte big's leading marker runs past the end): 3 small preads, no mapping, byte 0
  // read once
  const detection = [0, 64, CHUNKS[0]! + 4, 16, 772, 16];
  assert.deepEqual(log.slice(0, detection.length), detection);
  // the scan: its first leading marker from the detection's head, the first record's trailing
  // marker and the second's leading one from the detection's 16-byte read (none read again),
  // then per record its trailing marker and the next leading one in one 8-byte pread (the last
  // record's trailing marker alone)
  const scan: number[] = [];
  for (let r = 0, end = 0; r < records; r++) {
    end += 8 + CHUNKS[r % 2]!;
    if (r > 0) scan.push(end - 4, r === records - 1 ? 4 : 8);
  }
  assert.deepEqual(log.slice(detection.length), scan);
  assert.equal(
    reads,
    (detection.length + scan.length) / 2,
    `${reads} reads for ${records} records`,
  );
});

Deno.test("ieeeio warm open of datasets 192 and 256 KiB apart: one 256-byte pread a dataset, in the audit trail", async () => {
  const { log, reads } = await warmOpenReads(ieeeio);
  // the file header with the first records' 256-byte peek in one read (byte 16 not read again),
  // then per dataset one peek at the records after its data (its attributes and the next
  // dataset's header), the last one short
  assert.deepEqual(log.slice(0, 2), [0, 16 + 256]);
  const peeks = log.slice(2);
  assert.equal(peeks.length / 2, 2 * FRAMES, `${JSON.stringify(log)}`);
  for (let k = 0; k < peeks.length; k += 2) {
    assert.ok(k === 0 || peeks[k]! > peeks[k - 2]! + CHUNKS[0]!, `peek ${k / 2} at ${peeks[k]}`);
    assert.ok(peeks[k + 1]! <= 256, `peek ${k / 2}: ${peeks[k + 1]} bytes`);
  }
  assert.equal(reads, 1 + 2 * FRAMES);
});
