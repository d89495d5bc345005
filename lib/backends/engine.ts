/**
 * The engine that turns a pure framing into a {@link Backend}: its writes go through the native
 * sink (lib/backends/native_sink.ts), its reads through the native source
 * (lib/backends/native_source.ts), behind the checks every backend shares (lib/backends/guard.ts).
 * @module
 */
import type { Framing } from "../framings/types.ts";
import type { Backend } from "./backend.ts";
import { FSYNC_POLICIES } from "./backend.ts";
import { engineBackend } from "./guard.ts";
import { NativeSink } from "./native_sink.ts";
import { NativeSource } from "./native_source.ts";
import { recoverStoreAppend, StoreSink, undoStoreAppend } from "./store_sink.ts";
import { StoreSource } from "./store_source.ts";

/**
 * A {@link Backend} that stores frames with `framing`, through the FFI file layer: one file
 * through the native sink and source, or for a framing whose files are stores (Framing.store)
 * a directory of member files through the store sink and source, which write and read each
 * member whole (no `--bs`, `--direct` nor shared files).
 */
export function nativeBackend(framing: Framing): Backend {
  const common = {
    name: framing.name,
    description: framing.description,
    kind: "native",
    orders: framing.orders,
    options: framing.options,
    magic: framing.magic,
    fsyncPolicies: FSYNC_POLICIES,
    recordBytes: framing.recordBytes?.bind(framing),
    unavailable: () => null,
  } as const;
  if (framing.store !== undefined) {
    return engineBackend({
      ...common,
      store: {
        markers: framing.store.markers,
        recover: (path) => recoverStoreAppend(framing, path),
        undo: (path) => undoStoreAppend(framing, path),
      },
      transfer: false,
      sharedLayout: false,
      openWriter: (path, options) => new StoreSink(framing, path, options),
      openReader: (path, options = {}) => new StoreSource(framing, path, options),
    });
  }
  return engineBackend({
    ...common,
    transfer: true,
    sharedLayout: framing.sharedLayout,
    detect: framing.detect?.bind(framing),
    openWriter: (path, options) => new NativeSink(framing, path, options),
    openReader: (path, options = {}) => new NativeSource(framing, path, options),
  });
}
