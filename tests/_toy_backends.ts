/**
 * A toy native framing (`toy`) and a toy library peer (`toy-peer`), registered on import with
 * registerBackend and nothing else. Each declares its capabilities and makes no check of its own:
 * the guard checks their options and transfers, the callers read the capabilities. tests/registry_test.ts uses them to show that a new backend
 * is found by every command with no other edit. Run as a program, this module is the sciobench
 * CLI with the toys registered (as a plugin would be).
 * @module
 */
import type {
  Backend,
  FrameSink,
  FrameSource,
  ReadChunk,
  SinkOptions,
} from "../lib/backends/backend.ts";
import { nativeBackend } from "../lib/backends/engine.ts";
import { registerBackend } from "../lib/backends/registry.ts";
import { runCli } from "../lib/cli/main.ts";
import { IoError } from "../lib/core/errors.ts";
import {
  ALL_WORKLOADS,
  type ByteSource,
  type ChunkRef,
  type DType,
  DTYPES,
  type Frame,
  type FrameIndex,
  type Framing,
  type WriteOp,
  WRITING_WORKLOADS,
} from "../lib/framings/types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Chunk metadata as the toys store it. */
interface ToyChunk {
  name: string;
  dtype: DType;
  shape: number[];
  bytes: number;
}

function chunkBytes(data: Frame["chunks"][number]["data"]): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * `toy`: "TOY1", then per frame a u32 length, a JSON header (step and chunk metadata), and the
 * chunks' bytes (little-endian).
 */
export const toyFraming: Framing = {
  name: "toy",
  description: "toy framing of tests/_toy_backends.ts",
  orders: ["little"],
  options: [{
    name: "label",
    type: "string",
    default: "toy",
    help: "a label the toy ignores",
    workloads: ALL_WORKLOADS,
  }],
  magic: [{ bytes: [...enc.encode("TOY1")] }],
  sharedLayout: false,
  createWriter() {
    let at = 0;
    return {
      begin(): WriteOp[] {
        at = 4;
        return [{ kind: "write", offset: 0, data: enc.encode("TOY1") }];
      },
      writeFrame(frame: Frame): WriteOp[] {
        const meta: ToyChunk[] = frame.chunks.map((c) => ({
          name: c.name,
          dtype: c.dtype,
          shape: [...c.shape],
          bytes: c.data.byteLength,
        }));
        const head = enc.encode(JSON.stringify({ step: frame.step, chunks: meta }));
        const len = new Uint8Array(4);
        new DataView(len.buffer).setUint32(0, head.length, true);
        const ops: WriteOp[] = [{ kind: "write", offset: at, data: len }];
        ops.push({ kind: "write", offset: at + 4, data: head });
        at += 4 + head.length;
        for (const c of frame.chunks) {
          ops.push({ kind: "write", offset: at, data: chunkBytes(c.data) });
          at += c.data.byteLength;
        }
        return ops;
      },
      finish: (): WriteOp[] => [],
    };
  },
  openIndex(source: ByteSource): FrameIndex {
    const frames: ChunkRef[][] = [];
    for (let at = 4; at < source.size;) {
      const len = new DataView(source.read(at, 4).slice().buffer).getUint32(0, true);
      const head = JSON.parse(dec.decode(source.read(at + 4, len))) as { chunks: ToyChunk[] };
      at += 4 + len;
      frames.push(head.chunks.map((c) => {
        const ref = { ...c, offset: at, order: "little" as const };
        at += c.bytes;
        return ref;
      }));
    }
    return {
      framing: "toy",
      frameCount: frames.length,
      chunks(frame: number): readonly ChunkRef[] {
        const f = frames[frame];
        if (f === undefined) throw new RangeError(`toy: no frame ${frame}`);
        return f;
      },
    };
  },
};

const PEER_MAGIC = "TOYPEER\n";

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return btoa(s);
}

/** `toy-peer`: a "library" peer storing one JSON line per frame (chunk data in base64). */
export const toyPeer: Backend = {
  name: "toy-peer",
  description: "toy peer of tests/_toy_backends.ts",
  kind: "peer",
  orders: ["little"],
  options: [{
    name: "indent",
    type: "integer",
    default: 0,
    min: 0,
    help: "JSON indent the toy ignores",
    workloads: WRITING_WORKLOADS,
  }],
  magic: [{ bytes: [...enc.encode(PEER_MAGIC)] }],
  fsyncPolicies: ["end", "none"],
  transfer: false,
  sharedLayout: false,
  // the toy's JSON holds every type, but it declares no 64-bit integers: the checks read this
  dtypes: {
    only: DTYPES.filter((t) => t !== "int64" && t !== "uint64"),
    refusal: (dtype) => `toy-peer cannot store ${dtype}: it declares no 64-bit integers`,
  },
  limits: { datasets: { max: 1000, failure: "toy error" } },
  library: { displayName: "TOY", files: ["libtoy.so.0"] },
  unavailable: () => null,
  openWriter(path: string, options: SinkOptions): FrameSink {
    const file = Deno.openSync(path, {
      write: true,
      create: true,
      createNew: options.create === "new",
      truncate: options.create !== "append",
      append: options.create === "append",
    });
    if (options.create !== "append") file.writeSync(enc.encode(PEER_MAGIC));
    let open = true;
    return {
      path,
      writeFrame(frame: Frame): void {
        const chunks = frame.chunks.map((c) => ({
          name: c.name,
          dtype: c.dtype,
          shape: c.shape,
          data: base64(chunkBytes(c.data)),
        }));
        const line = enc.encode(JSON.stringify({ step: frame.step, chunks }) + "\n");
        for (let done = 0; done < line.length;) done += file.writeSync(line.subarray(done));
      },
      close(): void {
        if (!open) return;
        open = false;
        if ((options.fsync ?? "end") !== "none") file.syncSync();
        file.close();
      },
      abort(): void {
        if (!open) return;
        open = false;
        file.close();
        Deno.removeSync(path);
      },
    };
  },
  openReader(path: string): FrameSource {
    const text = dec.decode(Deno.readFileSync(path));
    if (!text.startsWith(PEER_MAGIC)) throw new IoError(`toy-peer: ${path} is not a toy-peer file`);
    const lines = text.slice(PEER_MAGIC.length).split("\n").filter((l) => l !== "");
    return {
      path,
      framing: "toy-peer",
      frameCount: lines.length,
      warnings: [],
      readFrame(frame: number): readonly ReadChunk[] {
        const f = JSON.parse(lines[frame]!) as {
          chunks: { name: string; dtype: DType; shape: number[]; data: string }[];
        };
        return f.chunks.map((c) => ({
          name: c.name,
          dtype: c.dtype,
          shape: c.shape,
          data: Uint8Array.from(atob(c.data), (ch) => ch.charCodeAt(0)),
        }));
      },
      close(): void {},
    };
  },
};

registerBackend(nativeBackend(toyFraming));
registerBackend(toyPeer);

if (import.meta.main) {
  // Child processes (library child, readers) run this program too, so they know the toys.
  Deno.env.set("SCIOBENCH_SELF", new URL(import.meta.url).pathname);
  Deno.exit(await runCli(Deno.args));
}
