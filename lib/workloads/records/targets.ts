/**
 * The byte orders a records run measures: each backend paired with every requested order it can
 * write, and the one order all of a run's backends share when the user named them.
 * @module
 */
import { NATIVE_ORDER } from "../../bytes/byteswap.ts";
import type { ByteOrder, EndianOption } from "../../framings/types.ts";
import type { Backend } from "../../backends/backend.ts";
import type { RecordsTarget } from "./options.ts";

/** The byte order an endian option resolves to on this machine. */
export function resolveOrder(e: EndianOption): ByteOrder {
  return e === "native" ? NATIVE_ORDER : e;
}

/**
 * The one byte order every backend of `backends` can write, for a run whose backends the user
 * named without `--endian`: native when all write it, else the first of big and little that
 * all write (netCDF classic through the library is big-endian only), else native (then each
 * backend that cannot is measured in its own order, with a note: {@link recordsTargets}).
 */
export function commonOrder(backends: readonly Backend[]): EndianOption {
  const all = (o: ByteOrder) => backends.every((b) => b.orders.includes(o));
  if (all(NATIVE_ORDER)) return "native";
  return (["big", "little"] as const).find(all) ?? "native";
}

/**
 * Pairs every backend with every requested byte order it can write; a backend that offers none
 * of them is measured in its own order(s), with a note. netCDF classic, for one, is big-endian only.
 */
export function recordsTargets(
  backends: readonly Backend[],
  orders: readonly EndianOption[] | ((framing: string) => readonly EndianOption[]),
  note: (text: string) => void = () => {},
): RecordsTarget[] {
  const out: RecordsTarget[] = [];
  for (const backend of backends) {
    const endians = typeof orders === "function" ? orders(backend.name) : orders;
    const seen = new Set<ByteOrder>();
    const ok: EndianOption[] = [];
    const skipped: EndianOption[] = [];
    for (const e of endians) {
      const order = resolveOrder(e);
      if (!backend.orders.includes(order)) skipped.push(e);
      else if (!seen.has(order)) {
        seen.add(order);
        ok.push(e);
      }
    }
    if (ok.length === 0) {
      const own = backend.orders.map((o) => (o === NATIVE_ORDER ? "native" : o));
      note(
        `${backend.name} writes ${
          backend.orders.join(" or ")
        }-endian data only; measuring --endian ${own.join(",")} instead of ${skipped.join(",")}`,
      );
      for (const o of backend.orders) {
        out.push({ backend, endian: o === NATIVE_ORDER ? "native" : o });
      }
      continue;
    }
    if (skipped.length > 0) {
      note(
        `${backend.name} writes ${
          backend.orders.join(" or ")
        }-endian data only; skipping --endian ${skipped.join(",")}`,
      );
    }
    for (const e of ok) out.push({ backend, endian: e });
  }
  return out;
}
