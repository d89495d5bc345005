/**
 * The real GSD library as a peer of the table: cells of `sciobench table` measured by
 * the Python program of program.ts with python3-gsd through /usr/bin/python3 (or $SCIOBENCH_PYTHON). The script
 * uses the same seeded data, frame count, read sample and random order as the native cells and
 * prints a row with the table's columns; `framing` is `python-gsd` (the gsd.hoomd layer, as
 * gsd's benchmark-hoomd.py reads) or `python-gsd-fl` (the gsd.fl file layer).
 * @module
 */
import { IoError, PeerUnavailableError, UsageError, VerifyError } from "../../core/errors.ts";
import type { Backend, FrameSink, FrameSource, TableCell } from "../../backends/backend.ts";
import type { Row } from "../../report/row.ts";
import { attachAudit, type RowAudit } from "../../sys/audit.ts";
import { envValue, recordLoaded } from "../common.ts";
import { GSD_PEER_PY } from "./program.ts";

/** Peer names this module measures, and the gsd API each uses. */
export const PYTHON_GSD_PEERS: Readonly<Record<string, "hoomd" | "fl">> = {
  "python-gsd": "hoomd",
  "python-gsd-fl": "fl",
};

/** Settings of one peer cell (a subset of the table's options). */
export type PythonGsdCellOptions = Omit<TableCell, "size" | "n" | "repeat">;

function python(): string {
  return envValue("SCIOBENCH_PYTHON") ?? "/usr/bin/python3";
}

let availability: string | null | undefined;

/** null when python3-gsd can run the peer program here, else why not (checked once). */
export function pythonGsdUnavailable(): string | null {
  if (availability !== undefined) return availability;
  availability = probe();
  return availability;
}

function probe(): string | null {
  const py = python();
  try {
    const out = new Deno.Command(py, {
      args: ["-c", "import numpy, gsd, gsd.fl, gsd.hoomd; print(gsd.__version__)"],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    if (!out.success) return `python3-gsd is not installed for ${py} (apt-get install python3-gsd)`;
    recordLoaded("python3-gsd", py, new TextDecoder().decode(out.stdout).trim());
  } catch {
    return `${py} is not installed (set SCIOBENCH_PYTHON to a python with python3-gsd)`;
  }
  return null;
}

/**
 * Measures one table cell (size bytes, N particles, repeat index) with python3-gsd and returns
 * its row. Throws UsageError for an unknown peer name, PeerUnavailableError where it cannot run,
 * VerifyError when data read back differs, IoError for other failures of the script.
 */
export async function runPythonGsdCell(
  peer: string,
  size: number,
  n: number,
  repeat: number,
  options: PythonGsdCellOptions,
): Promise<Row> {
  const api = PYTHON_GSD_PEERS[peer];
  if (api === undefined) {
    throw new UsageError(
      `unknown peer '${peer}'; known: ${Object.keys(PYTHON_GSD_PEERS).join(", ")}`,
    );
  }
  const why = pythonGsdUnavailable();
  if (why !== null) throw new PeerUnavailableError(`peer '${peer}' is unavailable: ${why}`);
  return await runPeerProgram(peer, api, "python3-gsd", size, n, repeat, options);
}

/**
 * Runs the peer program (program.ts) for one table cell with `--api api` and returns its row;
 * `library` names the Python package in messages. PeerUnavailableError when the program cannot
 * import its library, VerifyError when data read back differs, UsageError for a bad argument,
 * IoError for other failures.
 */
export async function runPeerProgram(
  peer: string,
  api: string,
  library: string,
  size: number,
  n: number,
  repeat: number,
  options: PythonGsdCellOptions,
): Promise<Row> {
  const args = [
    "-c",
    GSD_PEER_PY,
    "--api",
    api,
    "--size",
    String(size),
    "--n",
    String(n),
    "--only-repeat",
    String(repeat),
    "--seed",
    String(options.seed),
    "--sample",
    String(options.sampleBytes ?? 2 ** 28),
    "--dir",
    options.dir ?? ".",
    "--format",
    "jsonl",
    "--cache",
    options.cache ?? "cold",
    ...(options.warmup ? ["--warmup"] : []),
  ];
  const out = await new Deno.Command(python(), { args, stdout: "piped", stderr: "piped" }).output();
  const err =
    new TextDecoder().decode(out.stderr).split("\n").filter((l) => l.startsWith("gsd_peer: error:"))
      .map((l) => l.slice("gsd_peer: error: ".length)).join("; ") ||
    new TextDecoder().decode(out.stderr).trim();
  if (out.code === 3) throw new PeerUnavailableError(`peer '${peer}' is unavailable: ${err}`);
  if (out.code === 1) throw new VerifyError(`peer '${peer}': ${err}`);
  if (out.code === 2) throw new UsageError(`peer '${peer}': ${err}`);
  if (!out.success) {
    throw new IoError(`peer '${peer}' (${library}) failed with exit code ${out.code}: ${err}`);
  }
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  try {
    // The program's own audit trail (its phases, fsync and drops, readings, /proc/self/io) goes
    // with the row as sciobench's trails do (lib/sys/audit.ts), not as a column.
    const { audit, ...row } = JSON.parse(lines[lines.length - 1]!) as Row & { audit?: RowAudit };
    return attachAudit(row, audit);
  } catch {
    throw new IoError(
      `peer '${peer}': the ${library} program printed no row (${lines.join(" ").slice(0, 200)})`,
    );
  }
}

/**
 * A program peer `name`: it measures whole table cells with `measure` (nothing else), where
 * `unavailable` says it can run; `fileFraming` is the backend that reads the files it writes.
 */
export function programPeer(
  name: string,
  description: string,
  unavailable: () => string | null,
  measure: (cell: TableCell) => Promise<Row>,
  fileFraming?: string,
): Backend {
  const onlyCells = (): never => {
    throw new UsageError(
      `${name} is a program peer: it measures whole table cells (sciobench table --peer ${name})`,
    );
  };
  return {
    name,
    description,
    kind: "program",
    orders: ["little"],
    options: [],
    magic: [],
    // the program fsyncs once when its file is complete
    fsyncPolicies: ["end"],
    transfer: false,
    sharedLayout: false,
    unavailable,
    openWriter: (): FrameSink => onlyCells(),
    openReader: (): FrameSource => onlyCells(),
    measureTableCell: measure,
    ...(fileFraming !== undefined ? { fileFraming } : {}),
  };
}

/** python3-gsd's gsd.hoomd layer (as gsd's benchmark-hoomd.py reads) as a program peer. */
export const pythonGsd: Backend = programPeer(
  "python-gsd",
  "python3-gsd through gsd.hoomd (a program: measures whole table cells)",
  pythonGsdUnavailable,
  (cell) => runPythonGsdCell("python-gsd", cell.size, cell.n, cell.repeat, cell),
);

/** python3-gsd's gsd.fl file layer as a program peer. */
export const pythonGsdFl: Backend = programPeer(
  "python-gsd-fl",
  "python3-gsd through gsd.fl (a program: measures whole table cells)",
  pythonGsdUnavailable,
  (cell) => runPythonGsdCell("python-gsd-fl", cell.size, cell.n, cell.repeat, cell),
);
