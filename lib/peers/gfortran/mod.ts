/**
 * `f77-gfortran`: the Fortran runtime itself as a program peer of the scaling workload. The
 * IOspeed-style writer (sources.ts), compiled by gfortran, opens a file, writes n datasets as one
 * unformatted record each and closes it, timing that in its own process; the file is the f77
 * framing's format (4-byte native markers), which reads and checks it.
 * @module
 */
import { IoError, UsageError } from "../../core/errors.ts";
import type {
  Backend,
  DatasetWrites,
  FrameSink,
  FrameSource,
  ProgramSample,
} from "../../backends/backend.ts";
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { fortranProgram, gfortranUnavailable } from "../../baselines/gfortran/compile.ts";

export {
  fortranProgram,
  gfortranUnavailable,
  gfortranVersion,
} from "../../baselines/gfortran/compile.ts";

const NAME = "f77-gfortran";

/** Runs the compiled writer on `run`, past its start barrier; returns what it measured. */
async function writeDatasets(run: DatasetWrites): Promise<ProgramSample> {
  if (run.dtype !== "float64") {
    throw new UsageError(`${NAME} writes float64 datasets only (IOspeed's REAL*8 array)`);
  }
  const exe = fortranProgram("iospeed");
  const dataPath = `${run.path}.data`;
  Deno.writeFileSync(dataPath, run.data);
  try {
    const child = new Deno.Command(exe, {
      args: [run.path, String(run.datasets), String(run.data.byteLength / 8), dataPath],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // The start barrier: the program has loaded its data and says `ready`; then it is timed.
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const w = child.stdin.getWriter();
    try {
      await w.write(new TextEncoder().encode("go\n"));
      await w.close();
    } catch {
      // it exited early: its status and stderr say why
    }
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const status = await child.status;
    const stderr = await new Response(child.stderr).text();
    if (!status.success) {
      throw new IoError(`${NAME}: the Fortran writer failed: ${stderr.trim().split("\n")[0]}`);
    }
    const report = JSON.parse(text.trim().split("\n").at(-1)!) as ProgramSample;
    return {
      wallS: report.wallS,
      userS: report.userS,
      sysS: report.sysS,
      devWriteBytes: report.devWriteBytes,
    };
  } finally {
    Deno.removeSync(dataPath);
  }
}

const onlyDatasets = (): never => {
  throw new UsageError(
    `${NAME} is a program peer: it writes whole files of datasets (sciobench scaling --framing ${NAME})`,
  );
};

/** The gfortran runtime writing IOspeed's F77 section, as a program peer of `scaling`. */
export const f77Gfortran: Backend = {
  name: NAME,
  description:
    "gfortran's runtime writing unformatted records (IOspeed's F77 writer, compiled once; scaling)",
  kind: "program",
  orders: [NATIVE_ORDER],
  options: [],
  magic: [],
  // the program closes its file and never fsyncs (IOspeed's writer)
  fsyncPolicies: ["none"],
  transfer: false,
  sharedLayout: false,
  dtypes: {
    only: ["float64"],
    refusal: () => `${NAME} writes float64 only (IOspeed's REAL*8 array)`,
  },
  fileFraming: "f77",
  unavailable: gfortranUnavailable,
  openWriter: (): FrameSink => onlyDatasets(),
  openReader: (): FrameSource => onlyDatasets(),
  measureDatasetWrites: writeDatasets,
};
