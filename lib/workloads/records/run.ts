/**
 * A records run: every (repeat, target) cell in a scratch directory that is always removed, after
 * a check that every rank's file fits on its file system.
 * @module
 */
import { backendOrder } from "../cells.ts";
import { UsageError } from "../../core/errors.ts";
import { withScratchDir } from "../../io/scratch.ts";
import { rankScratchShare } from "../../mpi/phase.ts";
import { statfs } from "../../sys/libc.ts";
import { ColdReads, readOverlap, settleHeapUntimed } from "../transfer.ts";
import type { RecordsOptions, RecordsRun } from "./options.ts";
import { RecordsRanks } from "./ranks.ts";
import { runRecordsCell } from "./cell.ts";

/**
 * Runs the workload; calls `onRun` as each phase is measured and returns every run: per repeat
 * and target, write every record with its fsync, drop, read and verify every record
 * (lib/workloads/records/cell.ts), each phase fenced under MPI.
 */
export async function runRecords(
  options: RecordsOptions,
  onRun: (run: RecordsRun) => void = () => {},
): Promise<RecordsRun[]> {
  const ranks = new RecordsRanks(options);
  const bytes = ranks.frames.records * ranks.frames.recordBytes;
  const p = options.progress;
  const runs: RecordsRun[] = [];
  let index = 0;
  const cold = new ColdReads(options.dir ?? ".", (text) => p?.note(text));
  const readsOverlap = readOverlap(options.transfer, undefined);
  // (reads at --iodepth go through their queue, not this overlap)
  if (readsOverlap.note !== undefined && options.queue === undefined) p?.note(readsOverlap.note);
  await withScratchDir(options.dir, async (dir) => {
    const fs = statfs(dir);
    // every rank's file may be on this file system
    if (fs.availableBytes < (bytes * 1.05 + (64 << 20)) * ranks.size) {
      throw new UsageError(
        `records: ${bytes} bytes per file but only ${fs.availableBytes} bytes free in ${
          options.dir ?? "."
        }; ` +
          "use a smaller --shape or another --dir",
      );
    }
    if (fs.inMemory) p?.note(`${dir} is on ${fs.typeName}: reads come from memory, not a disk`);
    const ctx = {
      options,
      ranks,
      fsync: options.fsync ?? "end",
      bytes,
      cold,
      overlap: readsOverlap.mode !== "none",
      fs,
      emit: (run: RecordsRun) => {
        runs.push(run);
        onRun(run);
      },
    };
    // V8's first major collection, here rather than in the first cell's timed phases
    // mutant: records-heap-settle
    await settleHeapUntimed();
    for (let repeat = 1; repeat <= options.repeat; repeat++) {
      // the targets' order alternates between repeats (A B, then B A), each row says its place
      for (const [place, t] of backendOrder(options.targets, repeat).entries()) {
        await runRecordsCell(ctx, { t, repeat, order: place + 1, index: ++index, dir });
      }
    }
  }, rankScratchShare());
  return runs;
}
