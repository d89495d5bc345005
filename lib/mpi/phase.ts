/**
 * Phases fenced across ranks: a barrier before each phase, so every rank starts together, and
 * after it one Allreduce of a failure flag, so a rank that failed (I/O error, verification
 * failure, disk full) stops every rank at the same point instead of leaving them waiting in the
 * next collective. Without MPI a phase is just the function call.
 * @module
 */
import { IoError, PeerRankFailed, SciobenchError, UsageError } from "../core/errors.ts";
import type { ScratchShare } from "../io/scratch.ts";
import { world } from "./world.ts";

/** Every rank stops because one or more ranks failed in a phase; exit code of the first failure. */
export class RankFailure extends SciobenchError {
  /** The first rank that failed. */
  readonly rank: number;
  /** True on rank 0, which prints the message; other ranks exit quietly. */
  readonly report: boolean;
  constructor(message: string, exitCode: number, rank: number, report: boolean) {
    super(message, exitCode);
    this.rank = rank;
    this.report = report;
  }
}

export { PeerRankFailed } from "../core/errors.ts";

interface Failure {
  readonly reason: string;
  readonly code: number;
  /** True for {@link PeerRankFailed}: not the cause. */
  readonly secondary: boolean;
}

function asFailure(e: unknown): Failure {
  const secondary = e instanceof PeerRankFailed;
  if (e instanceof SciobenchError) return { reason: e.message, code: e.exitCode, secondary };
  return { reason: e instanceof Error ? e.message : String(e), code: 1, secondary };
}

/**
 * The hidden test hook `SCIOBENCH_TEST_FAIL_RANK=R` (with `SCIOBENCH_TEST_FAIL_PHASE=P`, default
 * `write`): rank R fails at the end of phase P as if its I/O had failed (`shared-write`: inside
 * the shared-file writer, after its first frame).
 */
export function injectedFailure(phase: string, rank: number): void {
  let failRank: string | undefined;
  let failPhase: string | undefined;
  try {
    failRank = Deno.env.get("SCIOBENCH_TEST_FAIL_RANK");
    failPhase = Deno.env.get("SCIOBENCH_TEST_FAIL_PHASE");
  } catch {
    return;
  }
  if (failRank === undefined || Number(failRank) !== rank) return;
  if (phase !== (failPhase ?? "write")) return;
  throw new IoError(`injected failure in phase ${phase} (SCIOBENCH_TEST_FAIL_RANK=${rank})`);
}

/**
 * Runs one phase on every rank: barrier, `fn`, then one Allreduce of a failure flag. When any rank
 * failed, rank 0 gathers the reasons and every rank throws {@link RankFailure} (rank 0's message
 * names the rank, its host and the reason). Without MPI, errors pass through unchanged.
 */
export async function fencedPhase<T>(phase: string, fn: () => Promise<T> | T): Promise<T> {
  const w = world();
  w.barrier();
  let value: T | undefined;
  let failed = false;
  let error: unknown;
  try {
    value = await fn();
    injectedFailure(phase, w.rank);
  } catch (e) {
    if (w.size === 1) throw e;
    failed = true;
    error = e;
  }
  agreeOnFailure(phase, failed, error);
  return value as T;
}

/**
 * The end of a phase on every rank (a collective): one Allreduce of `failed`; when any rank
 * failed, every rank throws {@link RankFailure}, rank 0's naming the first rank that failed
 * first-hand, its host and `error`'s message. Without MPI, `error` is thrown as it is.
 */
export function agreeOnFailure(phase: string, failed: boolean, error: unknown): void {
  const w = world();
  if (w.size === 1) {
    if (failed) throw error;
    return;
  }
  const failure = failed ? asFailure(error) : undefined;
  const [count] = w.allreduce([failed ? 1 : 0], "sum");
  if (!count) return;
  const reports = w.gatherStrings(failure ? JSON.stringify(failure) : "");
  if (w.rank !== 0) {
    throw new RankFailure(
      failure?.reason ?? "another rank failed",
      failure?.code ?? 1,
      w.rank,
      false,
    );
  }
  const failures = reports.map((text) => text === "" ? undefined : JSON.parse(text) as Failure);
  const primary = failures.findIndex((f) => f !== undefined && !f.secondary);
  const first = primary >= 0 ? primary : failures.findIndex((f) => f !== undefined);
  const f = failures[first]!;
  const causes = failures.filter((x) => x !== undefined && !x.secondary).length || count;
  const others = causes > 1 ? ` (and ${causes - 1} other rank${causes > 2 ? "s" : ""})` : "";
  throw new RankFailure(
    `rank ${first} on ${w.hosts[first]} failed in ${phase}${others}: ${f.reason}`,
    f.code,
    first,
    true,
  );
}

let unfencedReporter: ((error: unknown) => void) | undefined;

/**
 * Sets how a rank reports a failure that no fence will agree on (one outside every phase), which
 * it must say itself before it stops every rank (the CLI prints its one line).
 */
export function onUnfencedFailure(report: (error: unknown) => void): void {
  unfencedReporter = report;
}

/**
 * How the ranks share one scratch directory (rank 0 creates it and broadcasts its path), or
 * undefined without MPI; pass it to `withScratchDir`.
 */
export function rankScratchShare(): ScratchShare | undefined {
  const w = world();
  if (w.size === 1) return undefined;
  return {
    rank: w.rank,
    // the first rank on each host makes that host's directory and keeps its reaper
    firstOnHost: w.hosts.indexOf(w.host) === w.rank,
    agree: (path) => w.bcastString(path),
    check: (problem) =>
      agreeOnFailure(
        "scratch",
        problem !== "",
        new IoError(`cannot create a scratch directory: ${problem}`),
      ),
    // failures agreed in a fence (RankFailure) and usage errors (the same on every rank) are
    // reported by rank 0 once; any other failure is this rank's alone
    failing(error) {
      if (!(error instanceof RankFailure) && !(error instanceof UsageError)) {
        unfencedReporter?.(error);
      }
    },
  };
}
