/**
 * What a measured records phase prints: its result row (CSV columns; JSON adds the audit trail)
 * and the seed's own text layout of means per (framing, endian, phase).
 * @module
 */
import { type TableRenderer } from "../../report/output.ts";
import type { Row } from "../../report/row.ts";
import { attachAudit, auditOf } from "../../sys/audit.ts";
import type { Transfer } from "../../io/transfer.ts";
import { queueColumns, transferColumns } from "../transfer.ts";
import type { RecordsRun } from "./options.ts";
import { latencyFields, LatencyHistogram } from "../../report/histogram.ts";

const MIB = 2 ** 20;

/** The result row of one phase (CSV columns; JSON rows add file_bytes, device bytes, residency). */
export function recordsRow(
  run: RecordsRun,
  shape: readonly number[],
  transfer?: Transfer,
): Row {
  const queued = queueColumns(run.queue);
  if (run.error !== undefined) {
    const { framing, endian, phase, bytes, error, fsync } = run;
    return {
      framing,
      endian,
      phase,
      shape: shape.join("x"),
      bytes,
      repeat: run.repeat,
      order: run.order ?? "",
      fsync,
      cold_ok: "",
      cold_why: "",
      ...transferColumns(transfer),
      ...queued,
      stat: "run",
      error,
    };
  }
  const s = run.sample;
  return attachAudit({
    framing: run.framing,
    endian: run.endian,
    phase: run.phase,
    shape: shape.join("x"),
    bytes: run.bytes,
    wall_s: s.wallS,
    cpu_s: s.userS + s.sysS,
    user_s: s.userS,
    sys_s: s.sysS,
    MiBps: run.bytes / MIB / s.wallS,
    repeat: run.repeat,
    order: run.order ?? "",
    file_bytes: run.fileBytes,
    dev_read_bytes: s.devReadBytes,
    dev_write_bytes: s.devWriteBytes,
    resident_after_drop: run.residentAfterDrop,
    fsync: run.fsync,
    cold_ok: run.coldOk ?? "",
    cold_why: run.coldWhy ?? "",
    // each record's write or read latency (percentiles, IOPS over the wall time; JSON: histogram)
    ...latencyFields("record", run.latency ?? new LatencyHistogram(), s.wallS),
    ...transferColumns(transfer),
    ...queued,
    stat: "run",
    error: "",
  }, auditOf(run));
}

/**
 * The seed's text layout: at the end, per (framing, endian, phase), writes first, `About to write
 * <framing> file (<endian>), record by record: x X y Y z Z...` (or `About to read ...`), then
 * `avg CPU time = %7.2f secs.` and `avg User Time = W secs.`, means over the repeats (the seed's
 * "User Time" is wall clock time; here with two decimals). Rows themselves print nothing.
 */
export function seedRecordsRenderer(shape: readonly number[]): TableRenderer {
  const axes = ["x", "y", "z", "w", "v"];
  const dims = shape.map((d, i) => `${axes[i] ?? `d${i}`} ${d}`).join(" ");
  const groups = new Map<string, Row[]>();
  return {
    head: () => "",
    row(row: Row): string {
      if (row["stat"] !== "run" || row["error"]) return "";
      const k = `${row["phase"] === "read" ? 1 : 0}\u0000${row["framing"]}\u0000${row["endian"]}`;
      groups.get(k)?.push(row) ?? groups.set(k, [row]);
      return "";
    },
    foot(): string {
      // Writes first, then reads (the seed's order), each in the order measured.
      const keys = [...groups.keys()].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0));
      return keys.map((k) => {
        const rs = groups.get(k)!;
        const mean = (key: string) => rs.reduce((a, r) => a + Number(r[key]), 0) / rs.length;
        const first = rs[0]!;
        const what = `${first["framing"]} file (${first["endian"]}-endian)`;
        const head = first["phase"] === "write"
          ? `About to write ${what}, record by record: ${dims}...`
          : `About to read ${what}...`;
        return `${head}\navg CPU time = ${mean("cpu_s").toFixed(2).padStart(7)} secs.\n` +
          `avg User Time = ${mean("wall_s").toFixed(2)} secs.\n\n`;
      }).join("");
    },
  };
}
