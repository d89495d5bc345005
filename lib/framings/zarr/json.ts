/**
 * JSON as zarr-python 2.13 writes its metadata files (`zarr.util.json_dumps`: Python's
 * `json.dumps(o, indent=4, sort_keys=True, ensure_ascii=True, separators=(",", ": "))`, no
 * trailing newline), so the `.zgroup`, `.zarray`, `.zattrs` and `.zmetadata` sciobench writes are
 * byte for byte zarr-python's. Python tells integers from floats (`0` against `0.0`); a float is
 * written as a {@link PyFloat}.
 * @module
 */

/** A float as Python writes it (`0.0`, `1e+16`), where a plain number is written as an integer. */
export class PyFloat {
  /** The value. */
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/** A JSON value as Python holds it: numbers are integers, floats are {@link PyFloat}s. */
export type PyJson =
  | null
  | boolean
  | string
  | number
  | PyFloat
  | readonly PyJson[]
  | { readonly [key: string]: PyJson };

/** Python's `repr` of a finite float: the shortest digits, fixed from 1e-4 up to 1e16. */
function floatText(x: number): string {
  if (!Number.isFinite(x)) {
    // Python's json writes them bare (allow_nan): not JSON, but what zarr-python reads back
    return Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
  }
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exp] = x.toExponential().split("e") as [string, string];
  const e = Number(exp);
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = x < 0 ? "-" : "";
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
  if (digits.length <= e + 1) return `${sign}${digits}${"0".repeat(e + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
}

/** A string as Python's json writes it with ensure_ascii: every character outside ' '..'~' escaped. */
function stringText(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x08) out += "\\b";
    else if (c === 0x0c) out += "\\f";
    else out += `\\u${c.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

/** Sorts keys as Python sorts strings: by code point. */
function byCodePoint(a: string, b: string): number {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** `value` written at nesting `depth` (4 spaces a level). */
function valueText(value: PyJson, depth: number): string {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "string") return stringText(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer: ${value}`);
    return String(value);
  }
  if (value instanceof PyFloat) return floatText(value.value);
  const pad = " ".repeat(4 * (depth + 1));
  const end = " ".repeat(4 * depth);
  if (Array.isArray(value)) {
    const list = value as readonly PyJson[];
    if (list.length === 0) return "[]";
    return `[\n${list.map((v) => pad + valueText(v, depth + 1)).join(",\n")}\n${end}]`;
  }
  const object = value as { readonly [key: string]: PyJson };
  const keys = Object.keys(object).sort(byCodePoint);
  if (keys.length === 0) return "{}";
  const items = keys.map((k) => `${pad}${stringText(k)}: ${valueText(object[k]!, depth + 1)}`);
  return `${"{"}\n${items.join(",\n")}\n${end}}`;
}

/** `value` as zarr-python 2.13's `json_dumps` writes it (ASCII, no trailing newline). */
export function pythonJson(value: PyJson): string {
  return valueText(value, 0);
}

const encoder = new TextEncoder();

/** The bytes of {@link pythonJson} (ASCII). */
export function pythonJsonBytes(value: PyJson): Uint8Array {
  return encoder.encode(pythonJson(value));
}
