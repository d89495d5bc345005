/**
 * Writing a run of frames through any backend: open, write each frame, close (fsync when the
 * options ask), and on any failure close and remove the partial file. Signals (SIGINT, SIGTERM)
 * are let through between frames so scratch directories are cleaned up mid-run.
 * @module
 */
import type { Frame } from "../framings/types.ts";
import { signalPoint } from "../io/scratch.ts";
import { clockGettime } from "../sys/libc.ts";
import type { LatencyRecorder } from "./overlap.ts";
import type { Backend, FsyncPolicy, SinkOptions } from "./backend.ts";

/**
 * Why `backend` cannot write with fsync policy `policy` (one line for the user), or null when it
 * can (lib/backends/backend.ts: {@link Backend.fsyncPolicies}).
 */
export function fsyncRefusal(backend: Backend, policy: FsyncPolicy): string | null {
  const can = backend.fsyncPolicies;
  if (can.includes(policy)) return null;
  const why = backend.kind === "peer"
    ? "the library writes the file until it is closed; sciobench can fsync it only then"
    : "the program does its own writing";
  return `${backend.name} cannot honour --fsync ${policy} (${why}): use --fsync ${
    can.join(" or --fsync ")
  }`;
}

/** Called before frame `i` is written (progress, IOspeed's stars). */
export type FrameHook = (i: number) => void;

/**
 * Writes frames 0..count-1 (`frameAt(i)` builds frame i) to `path` through `backend`; returns
 * the seconds spent in close (trailer, header rewrite and fsync), so callers can split "to the
 * cache" from "to stable storage".
 */
export async function writeFrames(
  backend: Backend,
  path: string,
  options: SinkOptions,
  count: number,
  frameAt: (i: number) => Frame,
  beforeFrame?: FrameHook,
  latency?: LatencyRecorder,
): Promise<number> {
  const sink = backend.openWriter(path, options);
  try {
    for (let i = 0; i < count; i++) {
      beforeFrame?.(i);
      const frame = frameAt(i);
      const t0 = latency ? clockGettime() : 0;
      sink.writeFrame(frame);
      if (latency) latency.record(clockGettime() - t0);
      const y = signalPoint();
      if (y) await y;
    }
    const t0 = performance.now();
    sink.close();
    return (performance.now() - t0) / 1000;
  } catch (e) {
    sink.abort();
    throw e;
  }
}
