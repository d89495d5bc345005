/**
 * Phase measurement: wall time from the monotonic clock, CPU from times() (ticks) and getrusage
 * (microseconds), and device bytes from ru_inblock/ru_oublock; all for the whole process.
 * @module
 */
import { beginPhase, endPhase } from "./audit.ts";
import * as libc from "./libc.ts";

/** Untimed opens after the first and before the timed one, at most (python3-gsd's peer alike). */
export const OPEN_WARMUP_OPENS = 15;
/** Seconds the untimed opens may take at most (a big f77 or IEEEIO file's scan is long). */
export const OPEN_WARMUP_SECONDS = 0.05;

/**
 * Opens and closes the file untimed, {@link OPEN_WARMUP_OPENS} times or until
 * {@link OPEN_WARMUP_SECONDS} have passed: V8 optimises a function after some calls (its tiers
 * finish within about 15 opens of a gsd file, measured), so the open timed next is the reader's
 * optimised code, not its compilation, as python3-gsd's C is. With `counted`, exactly
 * {@link OPEN_WARMUP_OPENS} times whatever they take: opens that are collective calls of several
 * processes (a shared file's MPI_File_open), which every process must make as often.
 */
export function warmUpOpens(openClose: () => void, counted = false): void {
  beginPhase("open warm-up", false); // the audit trail shows them apart, untimed
  try {
    const until = performance.now() + OPEN_WARMUP_SECONDS * 1000;
    for (let k = 0; k < OPEN_WARMUP_OPENS && (counted || performance.now() < until); k++) {
      openClose();
    }
  } finally {
    endPhase();
  }
}

/** What one measured phase cost. */
export interface PhaseSample {
  /** Wall-clock time, seconds (CLOCK_MONOTONIC). */
  readonly wallS: number;
  /** User CPU, seconds (getrusage). */
  readonly userS: number;
  /** System CPU, seconds (getrusage). */
  readonly sysS: number;
  /** User CPU, clock ticks (times()). */
  readonly userTicks: number;
  /** System CPU, clock ticks (times()). */
  readonly sysTicks: number;
  /** Clock ticks per second of the tick fields. */
  readonly clkTck: number;
  /** Bytes the process read from devices (ru_inblock x 512). */
  readonly devReadBytes: number;
  /** Bytes the process wrote to devices (ru_oublock x 512). */
  readonly devWriteBytes: number;
}

/** A running measurement; `stop()` returns what happened since `startMeter()`. */
export interface Meter {
  /** Ends the phase and returns its sample. */
  stop(): PhaseSample;
}

let clkTck = 0;

/**
 * Starts measuring a phase. While a row's audit trail is recorded (lib/sys/audit.ts), the phase
 * is recorded under `phase` with the readings below, from its first reading to its last.
 */
export function startMeter(phase = "phase"): Meter {
  // mutant: meter-clock-ticks
  if (clkTck === 0) clkTck = libc.clockTicksPerSecond();
  const audit = beginPhase(phase);
  const r0 = libc.getrusage();
  const t0 = libc.times();
  const w0 = libc.clockGettime();
  if (audit) audit.startNs = w0;
  return {
    stop(): PhaseSample {
      const w1 = libc.clockGettime();
      const t1 = libc.times();
      const r1 = libc.getrusage();
      if (audit) {
        audit.endNs = w1;
        audit.readings = {
          monotonicNs: [w0, w1],
          userTicks: [t0.user, t1.user],
          sysTicks: [t0.sys, t1.sys],
          clkTck,
          userUs: [r0.userUs, r1.userUs],
          sysUs: [r0.sysUs, r1.sysUs],
          inBlocks: [r0.inBlocks, r1.inBlocks],
          outBlocks: [r0.outBlocks, r1.outBlocks],
          minorFaults: [r0.minorFaults, r1.minorFaults],
        };
        endPhase();
      }
      return {
        wallS: (w1 - w0) / 1e9,
        userS: (r1.userUs - r0.userUs) / 1e6,
        sysS: (r1.sysUs - r0.sysUs) / 1e6,
        // mutant: meter-ticks
        userTicks: t1.user - t0.user,
        sysTicks: t1.sys - t0.sys,
        clkTck,
        devReadBytes: (r1.inBlocks - r0.inBlocks) * 512,
        devWriteBytes: (r1.outBlocks - r0.outBlocks) * 512,
      };
    },
  };
}
