/**
 * The metadata columns of a table row (METADATA_COLUMN_NAMES, lib/workloads/columns.ts): what
 * its write, read and random phases did to names rather than data (files and directories
 * created, opened and synced; seconds in open, close, mkdir, rename, unlink and the fsync of
 * directories), from the row's audit trail (lib/sys/audit.ts). A store (Zarr) shows a file per
 * chunk and its directories; a one-file framing one file. Left empty for a phase whose calls the
 * trail did not see (a library's or another program's own opens).
 * @module
 */
import type { Row } from "../report/row.ts";
import { type AuditMeta, auditOf, type AuditPhase, noAuditMeta } from "../sys/audit.ts";

/** The sum of the metadata counters of `phases` (each and its child processes' phases). */
function metaOf(phases: readonly AuditPhase[]): AuditMeta | undefined {
  let sum: AuditMeta | undefined;
  const add = (m: AuditMeta | undefined) => {
    if (m === undefined) return;
    sum ??= noAuditMeta();
    for (const k of Object.keys(sum) as (keyof AuditMeta)[]) sum[k] += m[k];
  };
  for (const p of phases) {
    add(p.meta);
    for (const c of p.processes) add(c.phase.meta);
  }
  return sum;
}

/**
 * Sets the metadata columns of a measured table row (in place) from its audit trail. `own` is
 * true when sciobench's own calls did the phases' work (a native framing); false for a peer (a
 * library's or a program's own calls, which the trail does not see), whose columns stay empty,
 * as do those of a phase with no trail.
 */
export function addMetadataColumns(row: Row, own: boolean): void {
  const phases = own ? auditOf(row)?.phases ?? [] : [];
  const of = (name: string) => metaOf(phases.filter((p) => p.timed && p.name === name));
  const w = of("write");
  row.write_files_created = w?.filesCreated ?? "";
  row.write_dirs_created = w?.dirsCreated ?? "";
  row.write_files_opened = w?.filesOpened ?? "";
  row.write_files_synced = w?.filesSynced ?? "";
  row.write_dirs_synced = w?.dirsSynced ?? "";
  row.write_meta_s = w === undefined ? "" : w.metaNs / 1e9;
  for (const phase of ["read", "random"] as const) {
    const m = of(phase);
    row[`${phase}_files_opened`] = m?.filesOpened ?? "";
    row[`${phase}_meta_s`] = m === undefined ? "" : m.metaNs / 1e9;
  }
}
