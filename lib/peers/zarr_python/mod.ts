/**
 * zarr-python as a peer of the table: cells of `sciobench table` measured in its own process by
 * the peer program (lib/peers/python_gsd/program.ts, `--api zarr`) with python3-zarr 2.13
 * through /usr/bin/python3 (or $SCIOBENCH_PYTHON): the same seeded frames, frame count, read
 * sample and random order as the native cells, written as the zarr framing writes them (arrays
 * `particles/position` and `particles/orientation`, one frame per chunk, no compressor) with
 * `zarr.DirectoryStore` (`zarr-python`) or `zarr.NestedDirectoryStore` (`zarr-python-nested`),
 * so the zarr framing's rows (the format's cost) and these (the library's) stand side by side.
 * @module
 */
import type { Backend } from "../../backends/backend.ts";
import { envValue, recordLoaded } from "../common.ts";
import { PeerUnavailableError } from "../../core/errors.ts";
import { programPeer, runPeerProgram } from "../python_gsd/mod.ts";

/** Peer names this module measures, and the store each uses (the program's `--api`). */
export const ZARR_PYTHON_PEERS: Readonly<Record<string, "zarr" | "zarr-nested">> = {
  "zarr-python": "zarr",
  "zarr-python-nested": "zarr-nested",
};

let availability: string | null | undefined;

/** null when python3-zarr 2 can run the peer program here, else why not (checked once). */
export function zarrPythonUnavailable(): string | null {
  if (availability !== undefined) return availability;
  const py = envValue("SCIOBENCH_PYTHON") ?? "/usr/bin/python3";
  try {
    const out = new Deno.Command(py, {
      args: ["-c", "import numpy, zarr; print(zarr.__version__)"],
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const version = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      availability = `python3-zarr is not installed for ${py} (apt-get install python3-zarr)`;
    } else if (!version.startsWith("2.")) {
      availability = `zarr ${version} for ${py}: the peer drives zarr 2's DirectoryStore`;
    } else {
      recordLoaded("python3-zarr", py, version);
      availability = null;
    }
  } catch {
    availability = `${py} is not installed (set SCIOBENCH_PYTHON to a python with python3-zarr)`;
  }
  return availability;
}

/** A zarr-python program peer `name`. */
function zarrPeer(name: string, store: string): Backend {
  const api = ZARR_PYTHON_PEERS[name]!;
  return programPeer(
    name,
    `python3-zarr 2 through zarr.${store} (a program: measures whole table cells)`,
    zarrPythonUnavailable,
    (cell) => {
      const why = zarrPythonUnavailable();
      if (why !== null) throw new PeerUnavailableError(`peer '${name}' is unavailable: ${why}`);
      return runPeerProgram(name, api, "python3-zarr", cell.size, cell.n, cell.repeat, cell);
    },
    "zarr",
  );
}

/** zarr-python 2 with `zarr.DirectoryStore` (chunk keys `7.0.0`) as a program peer. */
export const zarrPython: Backend = zarrPeer("zarr-python", "DirectoryStore");

/** zarr-python 2 with `zarr.NestedDirectoryStore` (chunk keys `7/0/0`) as a program peer. */
export const zarrPythonNested: Backend = zarrPeer("zarr-python-nested", "NestedDirectoryStore");
