/**
 * The ranks of a run: MPI_COMM_WORLD when sciobench was started by an MPI launcher (mpirun,
 * mpiexec, srun), else a world of one process where every collective is a no-op and no MPI
 * library is loaded. Collectives carry numbers (float64) and strings (UTF-8, JSON).
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { setDiagnosticRank } from "../core/diagnostics.ts";
import { installMpiIo } from "../backends/mpi_io.ts";
import { mpiIoOf } from "./io.ts";
import {
  detectLaunch,
  loadMpi,
  type MpiLibrary,
  type MpiOp,
  pmiDescriptorProblem,
} from "./library.ts";

/** Facts about the ranks of a run, for JSON meta. */
export interface WorldFacts {
  /** Number of ranks. */
  readonly ranks: number;
  /** Distinct host names among the ranks. */
  readonly nodes: number;
  /** Ranks on the busiest node. */
  readonly "ranks_per_node": number;
  /** The MPI library loaded (path) and its ABI, or null without MPI. */
  readonly "mpi_library": string | null;
  /** `MPI_Get_library_version`'s first line, or null without MPI. */
  readonly "mpi_version": string | null;
  /** How collectives wait (`poll` or `block`, see lib/mpi/library.ts), or null without MPI. */
  readonly "mpi_wait": string | null;
}

/** The processes of a run and the collectives sciobench uses between them. */
export interface World {
  /** This process's rank, 0-based. */
  readonly rank: number;
  /** Number of ranks (1 without MPI). */
  readonly size: number;
  /** This process's host name (`MPI_Get_processor_name`, else `Deno.hostname()`). */
  readonly host: string;
  /** Every rank's host name, by rank. */
  readonly hosts: readonly string[];
  /** The MPI library, or null without MPI. */
  readonly mpi: MpiLibrary | null;
  /** Waits until every rank has arrived. */
  barrier(): void;
  /** Element-wise reduction over ranks; every rank gets the result. */
  allreduce(values: readonly number[], op: MpiOp): number[];
  /** Rank 0's string, on every rank. */
  bcastString(text: string): string;
  /** Every rank's string at rank 0, by rank (other ranks get an empty array). */
  gatherStrings(text: string): string[];
  /** Stops every rank with exit code `code` (MPI_Abort); without MPI exits this process. */
  abort(code: number): never;
  /** Ends MPI (MPI_Finalize) once; a no-op without MPI. */
  finalize(): void;
  /** Facts for the JSON meta. */
  facts(): WorldFacts;
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "localhost";
  }
}

/** A world of one process without MPI: every collective returns its input. */
export function serialWorld(): World {
  const host = hostname();
  return {
    rank: 0,
    size: 1,
    host,
    hosts: [host],
    mpi: null,
    barrier() {},
    allreduce: (values) => [...values],
    bcastString: (text) => text,
    gatherStrings: (text) => [text],
    abort(code: number): never {
      Deno.exit(code);
    },
    finalize() {},
    facts: () => ({
      ranks: 1,
      nodes: 1,
      ranks_per_node: 1,
      mpi_library: null,
      mpi_version: null,
      mpi_wait: null,
    }),
  };
}

/**
 * `SCIOBENCH_MPI_NODE_NAME`: this rank's node name instead of `MPI_Get_processor_name`'s, for
 * clusters whose processor names do not tell nodes apart, and for tests that make the ranks of
 * one machine look like several nodes (set per rank with the launcher's MPMD syntax).
 */
function nodeNameOverride(): string | undefined {
  try {
    const v = Deno.env.get("SCIOBENCH_MPI_NODE_NAME");
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * The `--reorder` shift that keeps every rank off its own node: the smallest K > 0 such that
 * rank r and rank (r + K) mod n are on different nodes for every r (with ranks placed node by
 * node, the ranks per node), from every rank's host name by rank. 0 when all ranks share one node;
 * the ranks on the busiest node when no shift separates every pair (uneven nodes).
 */
export function crossNodeShift(hosts: readonly string[]): number {
  const n = hosts.length;
  const perNode = new Map<string, number>();
  for (const h of hosts) perNode.set(h, (perNode.get(h) ?? 0) + 1);
  if (perNode.size <= 1) return 0;
  for (let k = 1; k < n; k++) {
    if (hosts.every((h, r) => h !== hosts[(r + k) % n])) return k;
  }
  return Math.max(...perNode.values()) % n;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A world over an initialised MPI library. */
function mpiWorld(mpi: MpiLibrary): World {
  const rank = mpi.rank();
  const size = mpi.size();
  const host = nodeNameOverride() ?? (mpi.processorName() || hostname());
  let finalized = false;

  const allreduce = (values: readonly number[], op: MpiOp): number[] => {
    const send = new Float64Array(values);
    const recv = new Float64Array(values.length);
    mpi.allreduce(
      new Uint8Array(send.buffer),
      new Uint8Array(recv.buffer),
      values.length,
      "double",
      op,
    );
    return Array.from(recv);
  };
  const bcastString = (text: string): string => {
    const bytes = rank === 0 ? encoder.encode(text) : new Uint8Array(0);
    const len = new Int32Array([bytes.length]);
    mpi.bcast(new Uint8Array(len.buffer), 1, "int", 0);
    const buf = rank === 0 ? bytes : new Uint8Array(len[0]!);
    if (len[0]! > 0) mpi.bcast(buf, len[0]!, "byte", 0);
    return rank === 0 ? text : decoder.decode(buf);
  };
  const gatherStrings = (text: string): string[] => {
    const bytes = encoder.encode(text);
    const mine = new Int32Array([bytes.length]);
    const counts = new Int32Array(rank === 0 ? size : 1);
    mpi.gather(new Uint8Array(mine.buffer), new Uint8Array(counts.buffer), 1, "int", 0);
    const displs = new Int32Array(counts.length);
    let total = 0;
    if (rank === 0) {
      for (let r = 0; r < size; r++) {
        displs[r] = total;
        total += counts[r]!;
      }
    }
    const recv = new Uint8Array(Math.max(total, 1));
    mpi.gatherv(
      bytes.length > 0 ? bytes : new Uint8Array(1).subarray(0, 0),
      recv,
      counts,
      displs,
      0,
    );
    if (rank !== 0) return [];
    return Array.from(
      { length: size },
      (_, r) => decoder.decode(recv.subarray(displs[r]!, displs[r]! + counts[r]!)),
    );
  };
  const hostList = gatherStrings(host);
  const hosts: string[] = JSON.parse(bcastString(JSON.stringify(hostList)));
  const perNode = new Map<string, number>();
  for (const h of hosts) perNode.set(h, (perNode.get(h) ?? 0) + 1);
  const version = mpi.libraryVersion().split("\n")[0]!.trim();
  return {
    rank,
    size,
    host,
    hosts,
    mpi,
    barrier: () => mpi.barrier(),
    allreduce,
    bcastString,
    gatherStrings,
    abort(code: number): never {
      try {
        mpi.abort(code);
      } finally {
        Deno.exit(code);
      }
    },
    finalize() {
      if (finalized) return;
      finalized = true;
      mpi.finalize();
    },
    facts: () => ({
      ranks: size,
      nodes: perNode.size,
      ranks_per_node: Math.max(...perNode.values()),
      mpi_library: `${mpi.path} (${mpi.abi})`,
      mpi_version: version,
      mpi_wait: mpi.wait,
    }),
  };
}

let current: World | undefined;

/**
 * Starts the world once: MPI_Init when an MPI launcher started this process (and the MPI-IO of
 * its library made the run's, lib/backends/mpi_io.ts), else the serial world (no library
 * loaded). Later calls return the same world.
 */
export function initWorld(): World {
  if (current) return current;
  const launch = detectLaunch();
  if (launch.launcher === null) {
    current = serialWorld();
    return current;
  }
  const pmi = pmiDescriptorProblem();
  if (pmi !== null) {
    // Every rank sees the same; rank 0 says it, so the job prints one line.
    if ((Deno.env.get("PMI_RANK") ?? "0") !== "0") Deno.exit(2);
    throw new UsageError(pmi);
  }
  const mpi = loadMpi(launch);
  mpi.init();
  current = mpiWorld(mpi);
  installMpiIo(mpiIoOf(mpi));
  setDiagnosticRank(current.rank, current.size);
  return current;
}

/** The world of this run: the one {@link initWorld} started, else the serial world. */
export function world(): World {
  current ??= serialWorld();
  return current;
}
