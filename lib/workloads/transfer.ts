/**
 * The columns every workload row carries about its system calls (`--bs`, `--direct`), and the
 * page-cache preparation that `--direct` makes unnecessary.
 * @module
 */
import type { Transfer } from "../io/transfer.ts";
import { col, type ColumnDoc } from "../report/human.ts";

/** `bs_bytes` and `direct`, with units. */
export const TRANSFER_COLUMN_DOCS: readonly ColumnDoc[] = [
  col(
    "bs_bytes",
    "bytes",
    "size",
    "bytes of each read and write call of native framings (--bs); 0: the default, small " +
      "writes coalesced into 4 MiB calls, larger writes and each frame's read in one call",
  ),
  col("direct", "", "text", "true when the files were opened with O_DIRECT (--direct)"),
];

/** The values of {@link TRANSFER_COLUMN_DOCS} for a run with `transfer`. */
export function transferColumns(
  transfer: Transfer | undefined,
): { bs_bytes: number; direct: "true" | "false" } {
  // text, so CSV says false rather than leaving it empty
  return { bs_bytes: transfer?.bs ?? 0, direct: transfer?.direct ? "true" : "false" };
}

/**
 * The page-cache state a read phase starts from: `direct` when the reads bypass the cache
 * (O_DIRECT, no drop needed or made), else the `cache` asked (default cold).
 */
export function cacheState(
  transfer: Transfer | undefined,
  cache: "cold" | "warm" | undefined,
): "cold" | "warm" | "direct" {
  return transfer?.direct ? "direct" : cache ?? "cold";
}
