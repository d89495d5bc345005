/**
 * `sciobench write`: writes the table workload's seeded frames to a file and keeps it.
 * @module
 */
import { detectBackend, usableBackend } from "../backends/registry.ts";
import type { Backend } from "../backends/backend.ts";
import { requireFile } from "./open.ts";
import { writeFrames } from "../backends/write.ts";
import { IoError, UsageError } from "../errors.ts";
import { statfs } from "../sys/libc.ts";
import { num } from "../report/output.ts";
import { startMeter } from "../sys/meter.ts";
import { BYTES_PER_PARTICLE, TableFrames } from "../workloads/table.ts";
import { parseArgs, parseCount, parseSeed } from "./args.ts";
import type { Command } from "./command.ts";
import {
  backendOptionArgs,
  backendOptionsHelp,
  checkFreeSpace,
  checkMemory,
  OUTPUT_OPTIONS,
  parseEndian,
  rowSink,
} from "./common.ts";
import type { OptionValues } from "../framings/options.ts";

const COLUMNS = [
  "framing",
  "path",
  "N",
  "frames",
  "file_bytes",
  "data_bytes",
  "write_s",
  "write_MiBps",
  "user_s",
  "sys_s",
  "dev_write_bytes",
  "seed",
  "first_frame",
];

const HELP = `sciobench write: write the table's frames to FILE and keep it

Usage: sciobench write --framing F --n N --frames K [options] FILE

Writes K frames of position (N x 3 float32) and orientation (N x 4 float32), the same seeded data
'sciobench table' uses (frame i has step 10 i and element [0][0] = i), fsyncs, and prints one
CSV row with the write's timing. An existing FILE is never replaced unless --force is given.
With --append the frames are added to an existing FILE (raw, f77, ieeeio, gsd, netcdf), numbered
on from its last frame, in its byte order; if anything fails, FILE is put back as it was.

Options:
  --framing F         framing to write (see 'sciobench framings'); required unless --append
  --n N               particles per frame (1024 or 32^2); required
  --frames K          number of frames; required
  --seed S            data seed (default 1)
  --endian E          native|little|big, where the framing allows it (default native)
  --option KEY=VALUE  framing-specific setting, repeatable (e.g. marker=8 for f77)
  --force             replace FILE if it exists
  --append            add the frames to an existing FILE (its framing is detected)
  --format csv|json   output format of the timing row (default csv)
  --out FILE          write the timing row to this file instead of stdout`;

/** The `write` subcommand. */
export const writeCommand: Command = {
  name: "write",
  summary: "write the table's frames to a file and keep it",
  get help(): string {
    return HELP + backendOptionsHelp("write");
  },
  async run(args: string[]): Promise<void> {
    const { values, positionals } = parseArgs("write", args, {
      allowPositionals: true,
      options: {
        ...OUTPUT_OPTIONS,
        framing: { type: "string" },
        n: { type: "string" },
        frames: { type: "string" },
        seed: { type: "string", default: "1" },
        endian: { type: "string" },
        option: { type: "string", multiple: true },
        append: { type: "boolean", default: false },
      },
    });
    if (values.append && values.force) {
      throw new UsageError(
        "write: --append adds to FILE and --force replaces it; give one of them",
      );
    }
    if (values.framing === undefined && !values.append) {
      throw new UsageError("write: --framing is required");
    }
    if (values.n === undefined) throw new UsageError("write: --n is required");
    if (values.frames === undefined) throw new UsageError("write: --frames is required");
    if (positionals.length !== 1) {
      throw new UsageError("write: give exactly one FILE (see 'sciobench write --help')");
    }
    const path = positionals[0]!;
    const n = parseCount(values.n, "--n");
    const count = parseCount(values.frames, "--frames");
    const seed = parseSeed(values.seed);
    // Bounds before anything is allocated or created: one frame in memory, all of them on disk.
    checkMemory(4 * BYTES_PER_PARTICLE * n, `a frame of N = ${n} particles`, "use a smaller --n");
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
    try {
      checkFreeSpace(
        statfs(dir),
        dir,
        BYTES_PER_PARTICLE * n * count,
        `${count} frames of N = ${n}`,
        "use a smaller --n or fewer --frames",
      );
    } catch (e) {
      if (!(e instanceof UsageError)) {
        throw new IoError(
          `${path}: cannot write there: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      throw e;
    }
    const endian = values.endian === undefined ? undefined : parseEndian(values.endian);
    const frames = new TableFrames(n, seed);
    let backend: Backend;
    let first = 0;
    let backendOptions: OptionValues;
    if (values.append) {
      requireFile(path);
      backend = values.framing === undefined ? detectBackend(path) : usableBackend(values.framing);
      backendOptions = backendOptionArgs(backend, values.option, "write");
      const existing = backend.openReader(path, { layout: frames.layout, backendOptions });
      first = existing.frameCount;
      existing.close();
    } else {
      backend = usableBackend(values.framing!);
      backendOptions = backendOptionArgs(backend, values.option, "write");
    }
    const create = values.append ? "append" : values.force ? "truncate" : "new";
    const meter = startMeter();
    await writeFrames(
      backend,
      path,
      { create, endian, fsync: true, backendOptions },
      count,
      (i) => frames.frame(first + i),
    );
    const m = meter.stop();
    const dataBytes = count * BYTES_PER_PARTICLE * n;
    const out = rowSink("write", args, COLUMNS, { ...values, force: values.force });
    out.add({
      framing: backend.name,
      path,
      N: n,
      frames: count,
      file_bytes: Deno.statSync(path).size,
      data_bytes: dataBytes,
      write_s: num(m.wallS),
      write_MiBps: num(dataBytes / 2 ** 20 / m.wallS, 4),
      user_s: num(m.userS),
      sys_s: num(m.sysS),
      dev_write_bytes: m.devWriteBytes,
      seed,
      first_frame: first,
    });
    out.close();
  },
};
