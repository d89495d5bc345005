/**
 * The hoomd schema on top of the GSD file writer: which chunks a frame stores, as
 * `gsd.hoomd` 2.7 `HOOMDTrajectory.append` decides (data equal to frame 0's or to the default is
 * skipped), and resuming that state when appending.
 * @module
 */
import { copySwapped, NATIVE_ORDER } from "../../bytes/byteswap.ts";
import { UsageError } from "../../core/errors.ts";
import type {
  ByteSource,
  Chunk,
  DType,
  Frame,
  FrameWriter,
  TypedArray,
  WriteOp,
  WriterOptions,
} from "../types.ts";
import { DTYPE_SIZE, typedArray } from "../types.ts";
import type { OutChunk } from "./file_writer.ts";
import { GsdFileWriter, leBytes, rowsCols } from "./file_writer.ts";
import { packVersion } from "./format.ts";
import { GsdIndex } from "./index.ts";

/** A field of the hoomd schema that `append` compares with frame 0 and with its default. */
interface HoomdField {
  /** Chunk name. */
  readonly name: string;
  /** Default value, broadcast over rows (one row); null for fields written as given. */
  readonly fallback: readonly number[] | null;
  /** True for per-particle fields (default repeated N times when read back). */
  readonly perParticle: boolean;
}

/** The configuration and particles fields in the order `append` writes them. */
const HOOMD_FIELDS: readonly HoomdField[] = [
  { name: "configuration/step", fallback: [0], perParticle: false },
  { name: "configuration/dimensions", fallback: [3], perParticle: false },
  { name: "configuration/box", fallback: [1, 1, 1, 0, 0, 0], perParticle: false },
  { name: "particles/N", fallback: [0], perParticle: false },
  // Default ['A']: one NUL-terminated name, stored as int8 [[65, 0]].
  { name: "particles/types", fallback: [65, 0], perParticle: false },
  { name: "particles/typeid", fallback: [0], perParticle: true },
  { name: "particles/mass", fallback: [1], perParticle: true },
  { name: "particles/charge", fallback: [0], perParticle: true },
  { name: "particles/diameter", fallback: [1], perParticle: true },
  { name: "particles/body", fallback: [-1], perParticle: true },
  { name: "particles/moment_inertia", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/position", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/orientation", fallback: [1, 0, 0, 0], perParticle: true },
  { name: "particles/velocity", fallback: [0, 0, 0], perParticle: true },
  { name: "particles/angmom", fallback: [0, 0, 0, 0], perParticle: true },
  { name: "particles/image", fallback: [0, 0, 0], perParticle: true },
  // Default []: an empty list, stored as no rows.
  { name: "particles/type_shapes", fallback: [], perParticle: false },
];
const HOOMD_BY_NAME = new Map(HOOMD_FIELDS.map((f, k) => [f.name, k]));

/**
 * numpy.array_equiv(data, fallback): every element equals the default, broadcast as numpy does
 * (a 1-value default against anything, a row against the rows of a per-particle N x M chunk,
 * else element by element); vacuously true for N = 0.
 */
function equivDefault(
  data: TypedArray,
  m: number,
  fallback: readonly number[],
  perParticle: boolean,
): boolean {
  const w = fallback.length;
  const n = data.length;
  if (w !== 1 && (perParticle ? m !== w : n !== w)) return false;
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) if (Number(data[i]!) !== fallback[i % w]) return false;
    return true;
  }
  if (w === 1) {
    const x = fallback[0]!;
    for (let i = 0; i < n; i++) if (data[i] !== x) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (data[i] !== fallback[i % w]) return false;
  return true;
}

/** numpy.array_equal on same-shaped arrays: element values equal (NaN never equal, -0 == 0). */
function equalValues(a: TypedArray, b: TypedArray): boolean {
  const n = a.length;
  if (b.length !== n) return false;
  const aBig = a instanceof BigInt64Array || a instanceof BigUint64Array;
  const bBig = b instanceof BigInt64Array || b instanceof BigUint64Array;
  if (aBig !== bBig) {
    for (let i = 0; i < n; i++) if (Number(a[i]!) !== Number(b[i]!)) return false;
    return true;
  }
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What `_read_frame(0)` gives for a field: the stored chunk, or its default. */
interface Reference {
  /** Data stored in frame 0, or null when frame 0 lacks the chunk (the default applies). */
  readonly data: TypedArray | null;
  readonly n: number;
  readonly m: number;
}

/** Where a continued file stands: frames it holds, and its frame 0 as `append` reads it back. */
interface HoomdResume {
  readonly frames: number;
  /** Frame 0's value of each field with a default (data null where frame 0 lacks it); null for 0 frames. */
  readonly reference: Map<string, Reference> | null;
  /** `particles/N` of frame 0 (0 when absent). */
  readonly n0: number;
}

/** A native-order typed array of `dtype` holding a copy of little-endian `bytes`. */
function fromLittleEndian(dtype: DType, bytes: Uint8Array): TypedArray {
  const width = DTYPE_SIZE[dtype];
  const copy = new Uint8Array(bytes.length);
  if (NATIVE_ORDER === "little" || width === 1) copy.set(bytes);
  else copySwapped(bytes, copy, width);
  return typedArray(dtype, copy.length / width, copy.buffer);
}

/**
 * What gsd.hoomd 2.7 `append` compares new frames with when the file has frames: frame 0 read
 * back (`_read_frame(0)`), here the stored chunks of the fields that have a default.
 */
export function readResume(index: GsdIndex, source: ByteSource): HoomdResume {
  if (index.frameCount === 0) return { frames: 0, reference: null, n0: 0 };
  const reference = new Map<string, Reference>();
  for (const f of HOOMD_FIELDS) {
    if (f.fallback === null) continue;
    const r = index.find(0, f.name);
    if (r === undefined) {
      reference.set(f.name, { data: null, n: 0, m: 0 });
      continue;
    }
    const data = fromLittleEndian(
      r.dtype,
      r.bytes === 0 ? new Uint8Array(0) : source.read(r.offset, r.bytes),
    );
    reference.set(f.name, { data, n: r.shape[0]!, m: r.shape[1]! });
  }
  const n = reference.get("particles/N")?.data;
  return {
    frames: index.frameCount,
    reference,
    n0: n && n.length > 0 ? Number(n[0]!) : 0,
  };
}

/** Chooses the chunks of each frame as gsd.hoomd 2.7 `append` does, then writes them. */
export class HoomdWriter implements FrameWriter {
  readonly #file: GsdFileWriter;
  readonly #hoomd: boolean;
  #frames = 0;
  #reference: Map<string, Reference> | null = null;
  #n0 = 0;
  readonly #appending: boolean;
  readonly #keepCopy: <T extends TypedArray>(data: T) => T;

  /**
   * `resume` continues a file: its frame count and frame 0 as `append`'s reference. `keepCopy`
   * copies frame 0's chunks for that reference (WriterOptions.keepCopy).
   */
  constructor(
    file: GsdFileWriter,
    hoomd: boolean,
    resume?: HoomdResume,
    keepCopy: <T extends TypedArray>(data: T) => T = (data) => data.slice() as typeof data,
  ) {
    this.#file = file;
    this.#hoomd = hoomd;
    this.#keepCopy = keepCopy;
    this.#appending = resume !== undefined;
    if (resume) {
      this.#frames = resume.frames;
      this.#reference = resume.reference;
      this.#n0 = resume.n0;
    }
  }

  begin(): WriteOp[] {
    // Opening an existing file for appending writes nothing (strace of gsd 2.7).
    return this.#appending ? [] : this.#file.create();
  }

  writeFrame(frame: Frame): WriteOp[] {
    const ops: WriteOp[] = [];
    const out = this.#hoomd ? this.#select(frame) : frame.chunks.map(verbatim);
    for (const c of out) this.#file.writeChunk(c, ops);
    this.#file.endFrame(ops);
    this.#frames++;
    return ops;
  }

  finish(): WriteOp[] {
    return [];
  }

  /** The chunks `append` writes for this frame, in its order; other chunks follow as given. */
  #select(frame: Frame): OutChunk[] {
    const known: (Chunk | undefined)[] = new Array(HOOMD_FIELDS.length);
    const others: Chunk[] = [];
    let rows = -1;
    for (const c of frame.chunks) {
      const k = HOOMD_BY_NAME.get(c.name);
      if (k === undefined) {
        others.push(c);
        continue;
      }
      known[k] = c;
      if (HOOMD_FIELDS[k]!.perParticle && rows < 0) rows = rowsCols(c.shape)[0];
    }
    const stepIndex = 0, nIndex = 3;
    known[stepIndex] ??= {
      name: "configuration/step",
      dtype: "uint64",
      shape: [1],
      data: new BigUint64Array([BigInt(frame.step)]),
    };
    known[nIndex] ??= {
      name: "particles/N",
      dtype: "uint32",
      shape: [1],
      data: new Uint32Array([rows < 0 ? 0 : rows]),
    };
    const first = this.#frames === 0;
    const ref = this.#reference;
    const out: OutChunk[] = [];
    const kept = first ? new Map<string, Reference>() : null;
    for (let k = 0; k < HOOMD_FIELDS.length; k++) {
      const c = known[k];
      if (c === undefined) continue;
      const f = HOOMD_FIELDS[k]!;
      const [n, m] = rowsCols(c.shape);
      if (f.fallback !== null) {
        const r = ref?.get(f.name);
        if (r !== undefined) {
          if (r.data !== null) {
            if (r.n === n && r.m === m && equalValues(r.data, c.data)) continue;
          } else {
            // Frame 0 lacks the chunk: it reads back as the default, repeated N0 times.
            const refRows = f.perParticle
              ? this.#n0
              : (f.fallback.length === 1 ? 1 : f.fallback.length);
            const refCols = f.perParticle || f.fallback.length === 1 ? f.fallback.length : 1;
            if (
              n === refRows && m === refCols && equivDefault(c.data, m, f.fallback, f.perParticle)
            ) continue;
          }
        }
        const inFrame0 = r !== undefined && r.data !== null;
        if (!inFrame0 && equivDefault(c.data, m, f.fallback, f.perParticle)) continue;
      }
      out.push({ name: c.name, dtype: c.dtype, n, m, bytes: leBytes(c.data) });
      kept?.set(f.name, { data: this.#keepCopy(c.data), n, m });
    }
    for (const c of others) out.push(verbatim(c));
    if (kept) {
      const refs = new Map<string, Reference>();
      for (const f of HOOMD_FIELDS) {
        if (f.fallback !== null) refs.set(f.name, kept.get(f.name) ?? { data: null, n: 0, m: 0 });
      }
      this.#reference = refs;
      const nChunk = kept.get("particles/N");
      this.#n0 = nChunk?.data ? Number(nChunk.data[0]!) : 0;
    }
    return out;
  }
}

function verbatim(c: Chunk): OutChunk {
  const [n, m] = rowsCols(c.shape);
  return { name: c.name, dtype: c.dtype, n, m, bytes: leBytes(c.data) };
}

/** The schema version option (`"1.4"`, `[1, 4]`) packed; UsageError when malformed. */
export function parseSchemaVersion(value: unknown): number {
  let v = value;
  if (v === undefined) return packVersion(1, 4);
  let parts: unknown[] | undefined;
  // `--option schemaVersion=1.4` arrives as the number 1.4 (so 1.10 reads as 1.1 from the CLI).
  if (typeof v === "number") v = String(v);
  if (typeof v === "string") parts = v.split(".").map(Number);
  else if (Array.isArray(v)) parts = v;
  const [a, b] = parts ?? [];
  if (
    parts?.length !== 2 || typeof a !== "number" || typeof b !== "number" || !Number.isInteger(a) ||
    !Number.isInteger(b) || a < 0 || a > 0xffff || b < 0 || b > 0xffff
  ) {
    throw new UsageError(
      `gsd: schemaVersion must be "major.minor" or [major, minor], got ${JSON.stringify(value)}`,
    );
  }
  return packVersion(a, b);
}

/** A string option or its fallback; UsageError when it is not a string. */
export function stringOption(options: WriterOptions, key: string, fallback: string): string {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== "string") throw new UsageError(`gsd: option ${key} must be a string`);
  return v;
}
