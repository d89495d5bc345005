/**
 * MPI-IO on the launcher's MPI library, for the backends that do their I/O through it (the
 * `MpiIo` of lib/backends/backend.ts: `mpiio`, and any backend whose library takes an MPI
 * communicator and an MPI_Info). Every open passes the run's hints (`--hint KEY=VALUE`) as an
 * MPI_Info, on MPI_COMM_WORLD (one shared file) or MPI_COMM_SELF (a file per rank); the hints
 * the library then reports for the file are read back (MPI_File_get_info) and kept for the run's
 * meta ({@link mpiIoMeta}), each asked hint marked reported, reported with another value, or not
 * reported (the library refused or ignored it). What a library reports differs: MPICH's ROMIO
 * reports every hint it uses, with the values it uses, and drops keys it does not know; Open
 * MPI 4 hands back the hints as they were given, whether its I/O component (ompio by default,
 * romio321 with OMPI_MCA_io=romio321) uses them or not. A library that opens files through
 * MPI-IO itself (parallel HDF5) is handed the communicator, an MPI_Info of the hints and a range
 * over the ranks, and passes the MPI_File it opened back for the same hint report. Calls of more
 * than 1 GiB are made in pieces (an MPI count is a C int).
 * A failed call throws IoError naming the file, the call, the bytes and offset, and the library's
 * own text for the error (MPI_Error_string). MPI_File_sync, the durable point, is recorded in the
 * audit trail as sciobench's own fsyncs are.
 * @module
 */
import { IoError } from "../core/errors.ts";
import type { FileLayout, MpiHint, MpiIo, MpiIoFile } from "../backends/backend.ts";
import { noteLibrarySync } from "../sys/libc.ts";
import {
  MPI_MODE,
  MpiCallError,
  type MpiFile,
  type MpiHandle,
  type MpiLibrary,
} from "./library.ts";

/** Bytes of one MPI-IO call at most: pieces of a larger read or write (a count is a C int). */
export const MPI_IO_PIECE_BYTES = 1 << 30;

/**
 * What the library says of one asked hint: `reported` (with the value asked), `reported as
 * VALUE`, or `not reported` (refused or ignored).
 */
export type HintStatus = string;

/** The hints of the opens of one kind (layout and access) as the library reported them. */
export interface HintReport {
  /** `shared` (MPI_COMM_WORLD) or `per-rank` (MPI_COMM_SELF). */
  readonly layout: FileLayout;
  /** `write` (created) or `read`. */
  readonly access: "write" | "read";
  /** The hints asked (`--hint`), by key. */
  readonly asked: Readonly<Record<string, string>>;
  /**
   * Each asked hint as the library reports it: `reported` (with the value asked), `reported as
   * VALUE` (another), or `not reported` (it refused or ignored it).
   */
  readonly status: Readonly<Record<string, HintStatus>>;
  /** Every hint the library reports for the file (MPI_File_get_info), by key. */
  readonly reported: Readonly<Record<string, string>>;
}

/** The reports of this process's opens so far, one per distinct report. */
const REPORTS: HintReport[] = [];

/** The library's description (set when the MPI-IO is made). */
let library: string | undefined;

/** Keeps `report` unless an equal one is kept. */
function keepReport(report: HintReport): void {
  const text = JSON.stringify(report);
  if (!REPORTS.some((r) => JSON.stringify(r) === text)) REPORTS.push(report);
}

/**
 * What the run's meta says of MPI-IO (`mpi_io`): the library and, for each kind of open made,
 * the hints asked and what the library did with them; null when no file was opened through
 * MPI-IO.
 */
export function mpiIoMeta(): Record<string, unknown> | null {
  if (REPORTS.length === 0 || library === undefined) return null;
  return { library, opens: REPORTS.map((r) => ({ ...r })) };
}

/** The report of one open: `asked` against what the library reports (`reported`). */
export function hintReport(
  layout: FileLayout,
  access: "write" | "read",
  asked: readonly MpiHint[],
  reported: readonly (readonly [string, string])[],
): HintReport {
  const got = Object.fromEntries(reported);
  const status: Record<string, HintStatus> = {};
  for (const [key, value] of asked) {
    const now = got[key];
    status[key] = now === undefined
      ? "not reported"
      : now === value
      ? "reported"
      : `reported as ${now}`;
  }
  return { layout, access, asked: Object.fromEntries(asked), status, reported: got };
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` with `SCIOBENCH_TEST_FAIL_PHASE=mpiio-write`:
 * rank R's second write call to a file it creates through MPI-IO is followed by a write the
 * library refuses (to the file opened read-only), whose error the rank then reports as its own.
 */
function failsWrites(rank: number): boolean {
  try {
    return Deno.env.get("SCIOBENCH_TEST_FAIL_PHASE") === "mpiio-write" &&
      Number(Deno.env.get("SCIOBENCH_TEST_FAIL_RANK")) === rank;
  } catch {
    return false;
  }
}

/** IoError naming the file and what was done, with the library's text when it is an MPI error. */
function failed(path: string, what: string, e: unknown): unknown {
  if (e instanceof MpiCallError) return new IoError(`${path}: ${what}: ${e.call}: ${e.text}`);
  if (e instanceof RangeError) return new IoError(`${path}: ${what}: ${e.message}`);
  return e;
}

/** The smallest and the largest of `value` over MPI_COMM_WORLD (one MPI_Allreduce). */
function worldRange(mpi: MpiLibrary, value: number): [number, number] {
  const send = new Float64Array([value, -value]);
  const recv = new Float64Array(2);
  mpi.allreduce(new Uint8Array(send.buffer), new Uint8Array(recv.buffer), 2, "double", "max");
  return [-recv[1]!, recv[0]!];
}

/** One file open through the library. */
class LibraryFile implements MpiIoFile {
  readonly path: string;
  readonly rank: number;
  readonly ranks: number;
  readonly #mpi: MpiLibrary;
  readonly #file: MpiFile;
  readonly #shared: boolean;
  readonly #failWrites: boolean;
  #writes = 0;

  constructor(mpi: MpiLibrary, path: string, file: MpiFile, shared: boolean, creates: boolean) {
    this.path = path;
    this.#mpi = mpi;
    this.#file = file;
    this.#shared = shared;
    this.rank = shared ? mpi.rank() : 0;
    this.ranks = shared ? mpi.size() : 1;
    this.#failWrites = creates && failsWrites(mpi.rank());
  }

  writeAt(data: Uint8Array, offset: number, collective: boolean): void {
    let at = 0;
    do {
      const piece = data.subarray(at, Math.min(data.length, at + MPI_IO_PIECE_BYTES));
      try {
        this.#mpi.fileWriteAt(this.#file, offset + at, piece, collective);
      } catch (e) {
        throw failed(this.path, `writing ${piece.length} bytes at byte ${offset + at}`, e);
      }
      at += piece.length;
    } while (at < data.length);
    if (++this.#writes === 2 && this.#failWrites) this.#refusedWrite(offset);
  }

  /** The test hook's write: to the file opened read-only (MPI_COMM_SELF), which the library refuses. */
  #refusedWrite(offset: number): void {
    const m = this.#mpi;
    const info = m.infoCreate([]);
    let file: MpiFile;
    try {
      file = m.fileOpen("self", this.path, MPI_MODE.rdonly, info);
    } finally {
      m.infoFree(info);
    }
    try {
      m.fileWriteAt(file, offset, new Uint8Array(1), false);
    } catch (e) {
      throw failed(this.path, `writing 1 byte at byte ${offset}`, e);
    } finally {
      m.fileClose(file);
    }
  }

  readAt(into: Uint8Array, offset: number, collective: boolean): void {
    let at = 0;
    do {
      const piece = into.subarray(at, Math.min(into.length, at + MPI_IO_PIECE_BYTES));
      try {
        this.#mpi.fileReadAt(this.#file, offset + at, piece, collective);
      } catch (e) {
        throw failed(this.path, `reading ${piece.length} bytes at byte ${offset + at}`, e);
      }
      at += piece.length;
    } while (at < into.length);
  }

  size(): number {
    try {
      return this.#mpi.fileSize(this.#file);
    } catch (e) {
      throw failed(this.path, "its size", e);
    }
  }

  setSize(bytes: number): void {
    try {
      this.#mpi.fileSetSize(this.#file, bytes);
    } catch (e) {
      throw failed(this.path, `setting its size to ${bytes} bytes`, e);
    }
  }

  sync(): void {
    try {
      this.#mpi.fileSync(this.#file);
    } catch (e) {
      throw failed(this.path, "syncing", e);
    }
    noteLibrarySync(this.path, "MPI_File_sync");
  }

  close(): void {
    try {
      this.#mpi.fileClose(this.#file);
    } catch (e) {
      throw failed(this.path, "closing", e);
    }
  }

  range(value: number): [number, number] {
    return this.#shared ? worldRange(this.#mpi, value) : [value, value];
  }

  gather(bytes: Uint8Array): Uint8Array[] {
    if (!this.#shared) return [bytes];
    const m = this.#mpi;
    const root = this.rank === 0;
    const mine = new Int32Array([bytes.length]);
    const counts = new Int32Array(root ? this.ranks : 1);
    m.gather(new Uint8Array(mine.buffer), new Uint8Array(counts.buffer), 1, "int", 0);
    const displs = new Int32Array(counts.length);
    let total = 0;
    if (root) {
      for (let r = 0; r < this.ranks; r++) {
        displs[r] = total;
        total += counts[r]!;
      }
    }
    const recv = new Uint8Array(Math.max(total, 1));
    m.gatherv(bytes, recv, counts, displs, 0);
    if (!root) return [];
    return Array.from(
      { length: this.ranks },
      (_, r) => recv.slice(displs[r]!, displs[r]! + counts[r]!),
    );
  }
}

/** The MPI-IO of `mpi` (initialised), whose first version line names it in rows and meta. */
export function mpiIoOf(mpi: MpiLibrary): MpiIo {
  const name = mpi.libraryVersion().split("\n")[0]!.replace(/\s+/g, " ").trim();
  library = name;
  return {
    library: name,
    abi: mpi.abi,
    handles(layout, hints) {
      const shared = layout === "shared";
      let info: MpiHandle;
      try {
        info = mpi.infoCreate(hints);
      } catch (e) {
        throw failed("--hint", "making the MPI_Info of the hints", e);
      }
      const rank = shared ? mpi.rank() : 0;
      const ranks = shared ? mpi.size() : 1;
      let freed = false;
      return {
        abi: mpi.abi,
        comm: mpi.comm(shared ? "world" : "self"),
        info,
        rank,
        ranks,
        range: (value) => shared ? worldRange(mpi, value) : [value, value],
        report(access, reported) {
          const made = "info" in reported
            ? reported.info
            : mpi.fileInfo({ cell: new Uint8Array(8), handle: reported.file });
          try {
            keepReport(hintReport(layout, access, hints, mpi.infoEntries(made)));
          } finally {
            mpi.infoFree(made);
          }
        },
        free() {
          if (freed) return;
          freed = true;
          mpi.infoFree(info);
        },
      };
    },
    open(path, access, layout, hints) {
      const shared = layout === "shared";
      const amode = access === "read"
        ? MPI_MODE.rdonly
        : MPI_MODE.create | MPI_MODE.wronly | (access === "create-new" ? MPI_MODE.excl : 0);
      let file: MpiFile;
      try {
        const info = mpi.infoCreate(hints);
        try {
          file = mpi.fileOpen(shared ? "world" : "self", path, amode, info);
        } finally {
          mpi.infoFree(info);
        }
      } catch (e) {
        throw failed(path, access === "read" ? "opening it to read" : "creating it", e);
      }
      try {
        const info = mpi.fileInfo(file);
        try {
          const reported = mpi.infoEntries(info);
          keepReport(hintReport(layout, access === "read" ? "read" : "write", hints, reported));
        } finally {
          mpi.infoFree(info);
        }
      } catch (e) {
        try {
          mpi.fileClose(file);
        } catch {
          // the first failure is the one to report
        }
        throw failed(path, "reading back its hints", e);
      }
      return new LibraryFile(mpi, path, file, shared, access !== "read");
    },
  };
}
