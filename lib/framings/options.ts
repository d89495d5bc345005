/**
 * The one validator of backend options. Every backend declares its options as data
 * ({@link OptionSpec}: name, type, default, allowed values, help, the workloads that honour it);
 * `--option KEY=VALUE` is parsed against them here, and options given through the library API
 * are checked against them here. An unknown key, a value of the wrong type or outside the
 * allowed ones, or an option the command does not use is a UsageError (exit 2) that names the
 * backend's options and suggests the nearest name.
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { type OptionSpec, type OptionValue, type Workload, WRITING_WORKLOADS } from "./types.ts";

/** Something that declares options: a framing or a backend. */
export interface OptionOwner {
  /** Registry name, used in messages. */
  readonly name: string;
  /** The declared options. */
  readonly options: readonly OptionSpec[];
}

/** Parsed option values by key. */
export type OptionValues = Readonly<Record<string, OptionValue>>;

/** Keys every backend takes outside its declared options (byte order and the expected layout). */
const STANDARD_KEYS: readonly string[] = ["endian", "layout"];

function ownersText(owners: readonly OptionOwner[]): string {
  return owners.map((o) => o.name).join(", ");
}

/** `(f77 options: marker, subrecordLimit)`, or `(f77 has no options)`. */
function optionsText(owners: readonly OptionOwner[]): string {
  return owners.map((o) =>
    o.options.length === 0
      ? `${o.name} has no options`
      : `${o.name} options: ${o.options.map((s) => s.name).join(", ")}`
  ).join("; ");
}

function allowedText(spec: OptionSpec): string {
  if (spec.choices) return `one of ${spec.choices.join(", ")}`;
  switch (spec.type) {
    case "integer":
      return `an integer${spec.min !== undefined ? ` from ${spec.min}` : ""}${
        spec.max !== undefined ? ` to ${spec.max}` : ""
      }`;
    case "boolean":
      return "true or false";
    case "list":
      return "a comma-separated list of non-empty items";
    case "string":
      return "a string";
    case "value":
      return "a value given through the library API";
  }
}

function badValue(owner: OptionOwner, spec: OptionSpec, shown: string): UsageError {
  return new UsageError(
    `bad value '${shown}' for option ${spec.name} of ${owner.name}: expected ${allowedText(spec)}`,
  );
}

function checkChoice(owner: OptionOwner, spec: OptionSpec, v: string | number): void {
  if (spec.choices && !spec.choices.includes(v)) throw badValue(owner, spec, String(v));
}

/** Parses the text of `--option KEY=VALUE` for `spec`; UsageError saying what is allowed. */
export function parseOptionValue(owner: OptionOwner, spec: OptionSpec, text: string): OptionValue {
  switch (spec.type) {
    case "integer": {
      const n = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
      return checkOptionValue(owner, spec, Number.isSafeInteger(n) ? n : text);
    }
    case "boolean":
      if (text === "true") return true;
      if (text === "false") return false;
      throw badValue(owner, spec, text);
    case "list":
      return checkOptionValue(owner, spec, text);
    case "string":
      return checkOptionValue(owner, spec, text);
    case "value":
      throw new UsageError(
        `option ${spec.name} of ${owner.name} is set through the library API, not --option`,
      );
  }
}

/**
 * Checks a typed value for `spec` (a `list` also takes a comma-separated string) and its
 * {@link OptionSpec.rule}; returns it.
 */
export function checkOptionValue(
  owner: OptionOwner,
  spec: OptionSpec,
  value: unknown,
): OptionValue {
  const typed = checkType(owner, spec, value);
  const problem = spec.rule?.(typed);
  if (problem !== undefined) {
    const text = String(typed);
    const shown = text.length > 64 ? `${text.slice(0, 61)}...` : text;
    throw new UsageError(
      `bad value '${shown}' for option ${spec.name} of ${owner.name}: ${problem}`,
    );
  }
  return typed;
}

/** The value as its declared type, checked against the type, bounds and choices. */
function checkType(owner: OptionOwner, spec: OptionSpec, value: unknown): OptionValue {
  switch (spec.type) {
    case "integer":
      if (
        typeof value !== "number" || !Number.isSafeInteger(value) ||
        (spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)
      ) throw badValue(owner, spec, String(value));
      checkChoice(owner, spec, value);
      return value;
    case "boolean":
      if (typeof value !== "boolean") throw badValue(owner, spec, String(value));
      return value;
    case "string":
      if (typeof value !== "string") throw badValue(owner, spec, String(value));
      checkChoice(owner, spec, value);
      return value;
    case "list": {
      const list = typeof value === "string" ? value.split(",").map((s) => s.trim()) : value;
      // an empty item (`names=`, `a,,b`) names nothing: refused, not read as a name ""
      if (!Array.isArray(list) || !list.every((s) => typeof s === "string" && s !== "")) {
        throw badValue(owner, spec, String(value));
      }
      for (const s of list) checkChoice(owner, spec, s);
      return list as string[];
    }
    case "value":
      return value as OptionValue;
  }
}

function unknownKey(key: string, owners: readonly OptionOwner[]): UsageError {
  const known = [...new Set(owners.flatMap((o) => o.options.map((s) => s.name)))];
  return new UsageError(
    `unknown option '${key}' for ${ownersText(owners)}${didYouMean(key, known)} (${
      optionsText(owners)
    })`,
  );
}

function checkWorkload(owner: OptionOwner, spec: OptionSpec, workload: Workload | undefined): void {
  if (workload !== undefined && !spec.workloads.includes(workload)) {
    throw new UsageError(
      `option ${spec.name} of ${owner.name} is not used by ${workload} (only by ${
        spec.workloads.join(", ")
      })`,
    );
  }
}

/**
 * Parses `--option KEY=VALUE` items for a run of `owners` (one backend, or several in one
 * command): each key must be declared by at least one of them, and its value must suit every
 * one that declares it. Returns the values for each owner, by owner name (only its own keys).
 */
export function parseOptionArgs(
  owners: readonly OptionOwner[],
  items: readonly string[] | undefined,
  workload?: Workload,
): Map<string, OptionValues> {
  const out = new Map<string, Record<string, OptionValue>>(owners.map((o) => [o.name, {}]));
  for (const item of items ?? []) {
    const eq = item.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(`bad --option '${item}': expected KEY=VALUE, such as marker=8`);
    }
    const key = item.slice(0, eq);
    const text = item.slice(eq + 1);
    const declaring = owners.filter((o) => o.options.some((s) => s.name === key));
    if (declaring.length === 0) throw unknownKey(key, owners);
    for (const owner of declaring) {
      const spec = owner.options.find((s) => s.name === key)!;
      checkWorkload(owner, spec, workload);
      out.get(owner.name)![key] = parseOptionValue(owner, spec, text);
    }
  }
  return out;
}

/**
 * Checks options given through the library API against what `owner` declares (plus `endian` and
 * `layout`, which every backend takes); UsageError on an unknown key or a bad value. Returns the
 * given values (keys set to undefined left out).
 */
export function checkOptions(
  owner: OptionOwner,
  values: Readonly<Record<string, unknown>> | undefined,
  workload?: Workload,
): OptionValues {
  const checked: Record<string, OptionValue> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value === undefined) continue;
    if (STANDARD_KEYS.includes(key)) {
      checked[key] = value as OptionValue;
      continue;
    }
    const spec = owner.options.find((s) => s.name === key);
    if (spec === undefined) throw unknownKey(key, [owner]);
    checkWorkload(owner, spec, workload);
    checked[key] = checkOptionValue(owner, spec, value);
  }
  return checked;
}

/** True when a writer honours `spec` (it is used by a workload that writes files). */
function writersHonour(spec: OptionSpec): boolean {
  return spec.workloads.some((w) => WRITING_WORKLOADS.includes(w));
}

/**
 * `values` with the declared default of every option a writer honours and `values` lacks: the
 * options a writer of a new file runs with. Readers and appends get no defaults filled in, as
 * they take what they are not told from the file.
 */
export function withWriteDefaults(
  owner: OptionOwner,
  values: Readonly<Record<string, unknown>> | undefined,
): OptionValues {
  const out: Record<string, OptionValue> = {};
  for (const spec of owner.options) {
    if (spec.default !== undefined && writersHonour(spec)) out[spec.name] = spec.default;
  }
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value !== undefined) out[key] = value as OptionValue;
  }
  return out;
}

/**
 * The value of option `name` in `values`, else its declared default (undefined when it has
 * none): how a framing called directly, without the guard's defaults, reads an option.
 */
export function optionOrDefault(
  owner: OptionOwner,
  values: Readonly<Record<string, unknown>> | undefined,
  name: string,
): unknown {
  return values?.[name] ?? owner.options.find((s) => s.name === name)?.default;
}
