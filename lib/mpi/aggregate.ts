/**
 * IOR-style aggregation of per-rank result rows at rank 0: bytes and CPU summed over ranks, wall
 * times the slowest rank's (a phase lasts from the barrier before it to the last rank's end),
 * aggregate MiB/s = all ranks' bytes / that time, and per-rank min, mean and max of each phase's
 * time and MiB/s in extra columns; latency percentiles from the ranks' histograms merged. Without
 * MPI the row passes through unchanged.
 * @module
 */
import type { Row } from "../report/row.ts";
import {
  callLatencyFields,
  latencyFields,
  LatencyHistogram,
  latencyKey,
} from "../report/histogram.ts";
import { attachAudit, auditOf, type RowAudit } from "../sys/audit.ts";
import { type World, world } from "./world.ts";

/** One rate column recomputed from a byte column and a seconds column: bytes / 2^20 / seconds. */
export interface RateColumn {
  /** The MiB/s column. */
  readonly rate: string;
  /** The bytes it counts (summed over ranks). */
  readonly bytes: string;
  /** The phase's wall seconds (the slowest rank's). */
  readonly seconds: string;
}

/** How a workload's columns combine over ranks; columns not named keep rank 0's value. */
export interface AggregateSpec {
  /** Columns summed over ranks: bytes, frames, CPU seconds and ticks. */
  readonly sum: readonly string[];
  /** Columns that take the largest value over ranks: wall times, latencies. */
  readonly max: readonly string[];
  /** Rates recomputed from summed bytes over the slowest time. */
  readonly rates: readonly RateColumn[];
  /**
   * Read phases whose latency columns (lib/report/histogram.ts: percentiles and IOPS) come from
   * the ranks' histograms merged, with IOPS over the phase's slowest time (`seconds`).
   */
  readonly latencies?: readonly { readonly phase: string; readonly seconds: string }[];
}

/** Columns every MPI row adds: rank count, the rank ("all" for the aggregate) and its host. */
const RANK_COLUMNS = ["ranks", "rank", "host"] as const;

/**
 * The columns of a workload under MPI: its own, then `ranks`, `rank`, `host`, `extra` (such as
 * the files a rank wrote and read), then min, mean and max over ranks of each phase's seconds
 * and MiB/s. Without MPI (one rank) the workload's own columns only.
 */
export function rankColumns(
  columns: readonly string[],
  spec: AggregateSpec,
  extra: readonly string[] = [],
  w: World = world(),
): string[] {
  if (w.size === 1) return [...columns];
  const spread = spec.rates.flatMap((r) =>
    [r.seconds, r.rate].flatMap((c) => [`${c}_min`, `${c}_mean`, `${c}_max`])
  );
  return [...columns, ...RANK_COLUMNS, ...extra, ...spread];
}

function numeric(row: Row, column: string): number {
  const v = row[column];
  return typeof v === "number" ? v : Number(v);
}

/** Combines the rows of every rank (by rank) into the aggregate row. */
export function aggregateRows(rows: readonly Row[], spec: AggregateSpec, hosts: number): Row {
  const out: Row = { ...rows[0]! };
  for (const c of spec.sum) {
    if (!(c in out)) continue;
    out[c] = rows.reduce((s, r) => s + numeric(r, c), 0);
  }
  for (const c of spec.max) {
    if (!(c in out)) continue;
    out[c] = Math.max(...rows.map((r) => numeric(r, c)));
  }
  for (const { rate, bytes, seconds } of spec.rates) {
    const total = rows.reduce((s, r) => s + numeric(r, bytes), 0);
    const slowest = Math.max(...rows.map((r) => numeric(r, seconds)));
    out[rate] = total / 2 ** 20 / slowest;
    for (const c of [seconds, rate]) {
      const values = rows.map((r) => numeric(r, c));
      out[`${c}_min`] = Math.min(...values);
      out[`${c}_mean`] = values.reduce((s, v) => s + v, 0) / values.length;
      out[`${c}_max`] = Math.max(...values);
    }
  }
  for (const { phase, seconds } of spec.latencies ?? []) {
    const parts = rows.map((r) => LatencyHistogram.fromJSON(r[latencyKey(phase)]));
    if (parts.some((h) => h === undefined)) continue;
    const merged = new LatencyHistogram();
    for (const h of parts) merged.merge(h!);
    const slowest = Math.max(...rows.map((r) => numeric(r, seconds)));
    // mutant: mpi-latency-merged
    Object.assign(out, latencyFields(phase, merged, slowest));
    const calls = rows.map((r) => LatencyHistogram.fromJSON(r[latencyKey(`${phase}_call`)]));
    if (calls.some((h) => h === undefined)) continue;
    const mergedCalls = new LatencyHistogram();
    for (const h of calls) mergedCalls.merge(h!);
    Object.assign(out, callLatencyFields(phase, mergedCalls));
  }
  out.ranks = rows.length;
  out.rank = "all";
  out.host = `${hosts} node${hosts === 1 ? "" : "s"}`;
  return out;
}

/**
 * Collects this rank's row at rank 0 (MPI_Gatherv) and returns the rows rank 0 prints: the
 * aggregate, then with `perRank` one row per rank with its host. Other ranks get none. Without
 * MPI, `[row]`.
 */
export function rankRows(row: Row, spec: AggregateSpec, perRank: boolean): Row[] {
  const w = world();
  if (w.size === 1) return [row];
  // each rank's audit trail travels with its row, for --per-rank rows
  const texts = w.gatherStrings(JSON.stringify({ row, audit: auditOf(row) ?? null }));
  if (w.rank !== 0) return [];
  const parts = texts.map((t) => JSON.parse(t) as { row: Row; audit: RowAudit | null });
  const rows = parts.map((p) => p.row);
  const hosts = new Set(w.hosts).size;
  const all = aggregateRows(rows, spec, hosts);
  if (!perRank) return [all];
  return [
    all,
    ...rows.map((r, rank) =>
      attachAudit(
        { ...r, ranks: rows.length, rank, host: w.hosts[rank] ?? "" },
        parts[rank]!.audit ?? undefined,
      )
    ),
  ];
}
