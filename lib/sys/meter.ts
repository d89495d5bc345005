/**
 * Phase measurement: wall time from the monotonic clock, CPU from times() (ticks) and getrusage
 * (microseconds), and device bytes from ru_inblock/ru_oublock; all for the whole process.
 * @module
 */
import * as libc from "./libc.ts";

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

/** Starts measuring a phase. */
export function startMeter(): Meter {
  if (clkTck === 0) clkTck = libc.clockTicksPerSecond();
  const r0 = libc.getrusage();
  const t0 = libc.times();
  const w0 = libc.clockGettime();
  return {
    stop(): PhaseSample {
      const w1 = libc.clockGettime();
      const t1 = libc.times();
      const r1 = libc.getrusage();
      return {
        wallS: (w1 - w0) / 1e9,
        userS: (r1.userUs - r0.userUs) / 1e6,
        sysS: (r1.sysUs - r0.sysUs) / 1e6,
        userTicks: t1.user - t0.user,
        sysTicks: t1.sys - t0.sys,
        clkTck,
        devReadBytes: (r1.inBlocks - r0.inBlocks) * 512,
        devWriteBytes: (r1.outBlocks - r0.outBlocks) * 512,
      };
    },
  };
}
