/**
 * The rates of a table row's read phases without the verification the reading thread did
 * (`read_io_MiBps`, `random_io_MiBps`): the rate of the phase's I/O calls alone, which is what
 * fio and IOR, which verify nothing, measure.
 * @module
 */
import type { Row } from "../../report/row.ts";

/** Each read phase's io-rate column, with the seconds and verification seconds it is made of. */
const IO_RATES = [
  { rate: "read_io_MiBps", seconds: "read_s", verify: "read_verify_s" },
  { rate: "random_io_MiBps", seconds: "random_s", verify: "random_verify_s" },
] as const;

/**
 * Sets `read_io_MiBps` and `random_io_MiBps` of a measured row (in place): read_bytes / 2^20 /
 * (phase seconds - verify seconds), MiB/s; left empty where a column is missing or the phase
 * less its verification is not a positive time.
 */
export function addIoRates(row: Row): void {
  const bytes = Number(row.read_bytes);
  for (const { rate, seconds, verify } of IO_RATES) {
    const io = Number(row[seconds]) - Number(row[verify] ?? 0);
    // mutant: table-io-rate-excludes-verify
    row[rate] = bytes > 0 && io > 0 ? bytes / 2 ** 20 / io : "";
  }
}
