/**
 * `sciobench table`: the GSD table (write, open, sequential and random read) over framings.
 * @module
 */
import { UsageError } from "../errors.ts";
import { BACKENDS } from "../backends/registry.ts";
import type { Backend } from "../backends/backend.ts";
import { didYouMean } from "../suggest.ts";
import { Progress } from "../report/progress.ts";
import { gsdTableRenderer } from "../report/rst.ts";
import { rankColumns } from "../mpi/aggregate.ts";
import { world } from "../mpi/world.ts";
import {
  runTable,
  TABLE_AGGREGATE,
  TABLE_COLUMNS,
  TABLE_RANK_COLUMNS,
} from "../workloads/table.ts";
import { formatSize, parseArgs, parseChoice, parseCount, parseList, parseSize } from "./args.ts";
import type { Command } from "./command.ts";
import {
  AUDIT_HELP,
  AUDIT_OPTION,
  checkScratchParent,
  MPI_HELP,
  MPI_OPTIONS,
  OUTPUT_HELP,
  OUTPUT_OPTIONS,
  parseEndian,
  parseReorder,
  rowSink,
  usableBackends,
} from "./common.ts";

const HELP = `sciobench table: the GSD benchmark table (gsd's benchmark-hoomd.py), over framings

Usage: sciobench table [options]

For each size, N and framing: write ceil(size / 28N) frames of position (N x 3 float32) and
orientation (N x 4 float32) with fsync inside the timing; drop the file from the page cache
(posix_fadvise, no root needed) and time the open; read a 0.25 GiB sample in order; drop again;
read it in a seeded random order. Every frame read is checked against what was written.

Options:
  --framing LIST      framings to compare (default raw); see 'sciobench framings'
  --size LIST         target file sizes (default 128MiB,1GiB); units B, KiB, MiB, GiB
  --n LIST            particle counts (default 32^2,128^2,1024^2)
  --dir DIR           where to write the scratch files (default: current directory)
  --repeat K          measure each cell K times (default 1)
  --seed S            seed of the data and the random order (default 1)
  --warmup            write each file once untimed before the timed write, as gsd does
  --sample SIZE       bytes to read in each read phase (default 256MiB, capped at the file)
  --cache cold|warm   page cache before each read phase: cold drops the file (default), warm
                      reads it once first (memory-speed numbers of the framing's code)
  --endian E          native|little|big, for framings that offer a choice (default native)
  --peer LIST         also measure the real library on the same cells: python-gsd (gsd.hoomd,
                      as gsd's benchmark reads) or python-gsd-fl (gsd.fl); needs python3-gsd
${MPI_HELP}
${OUTPUT_HELP}
${AUDIT_HELP}

Columns (CSV): ${TABLE_COLUMNS.join(",")}
Rates are MiB/s (2^20 bytes), as gsd prints them; random_ms is milliseconds per frame.
write_s includes the final fsync; write_sync_s is the part spent closing (trailer, fsync), so
write_s - write_sync_s is the time to write into the page cache.`;

/** The `table` subcommand. */
export const tableCommand: Command = {
  name: "table",
  summary: "the GSD table: write, open, read and random read per size, N and framing",
  help: HELP,
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs("table", args, {
      options: {
        ...OUTPUT_OPTIONS,
        ...AUDIT_OPTION,
        ...MPI_OPTIONS,
        framing: { type: "string", default: "raw" },
        size: { type: "string", default: "128MiB,1GiB" },
        n: { type: "string", default: "32^2,128^2,1024^2" },
        dir: { type: "string" },
        repeat: { type: "string", default: "1" },
        seed: { type: "string", default: "1" },
        warmup: { type: "boolean", default: false },
        sample: { type: "string", default: "256MiB" },
        endian: { type: "string", default: "native" },
        peer: { type: "string" },
        cache: { type: "string", default: "cold" },
      },
    });
    const sizes = parseList(values.size, "--size").map((s) => parseSize(s, "--size"));
    const ns = parseList(values.n, "--n").map((s) => parseCount(s, "--n"));
    const repeat = parseCount(values.repeat, "--repeat");
    const seed = Number(values.seed);
    if (!Number.isSafeInteger(seed)) {
      throw new UsageError(`bad --seed '${values.seed}': expected an integer`);
    }
    const sampleBytes = parseSize(values.sample, "--sample");
    const endian = parseEndian(values.endian);
    const progress = new Progress();
    const backends = usableBackends(values.framing);
    const peers: Backend[] = [];
    const programs = BACKENDS.filter((b) => b.kind === "program");
    for (const name of values.peer === undefined ? [] : parseList(values.peer, "--peer")) {
      const peer = programs.find((b) => b.name === name);
      if (peer === undefined) {
        const known = programs.map((b) => b.name);
        throw new UsageError(
          `unknown peer '${name}'${didYouMean(name, known)}; known: ${known.join(", ")}`,
        );
      }
      if (world().size > 1) throw new UsageError("--peer does not run under MPI");
      const why = peer.unavailable();
      if (why === null) peers.push(peer);
      else progress.note(`skipping peer '${name}': ${why}`);
    }
    const fs = checkScratchParent(values.dir);
    // every rank's files may share this file system
    const largest = (Math.max(...sizes) * 1.05 + (64 << 20)) * world().size;
    if (fs.availableBytes < largest) {
      throw new UsageError(
        `the largest --size needs about ${formatSize(largest)} but ${
          values.dir ?? "the current directory"
        } ` +
          `has ${formatSize(fs.availableBytes)} free; use a smaller --size or another --dir`,
      );
    }
    const sink = rowSink(
      "table",
      args,
      rankColumns(TABLE_COLUMNS, TABLE_AGGREGATE, TABLE_RANK_COLUMNS),
      values,
      gsdTableRenderer(backends.length + peers.length > 1),
    );
    try {
      await runTable(
        {
          backends,
          peers,
          cache: parseChoice(values.cache, ["cold", "warm"] as const, "--cache"),
          sizes,
          ns,
          dir: values.dir,
          repeat,
          seed,
          warmup: values.warmup,
          sampleBytes,
          endian,
          progress,
          reorder: parseReorder(values.reorder),
          perRank: values["per-rank"],
        },
        (row) => sink.add(row),
      );
    } finally {
      progress.clear();
      sink.close();
    }
  },
};
