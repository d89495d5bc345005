/**
 * Crash consistency of appends: for every native framing, a small file gets `write --append`
 * runs that are killed (SIGKILL, or SIGINT/SIGTERM) at random moments, each followed by one
 * sciobench command on the file (`info` or `read --verify`, which roll back a killed append).
 * Every file must end byte for byte as it was or as the complete append makes it, and verify.
 * Also signals during new and `--force` writes: the target is as it was or complete, and no
 * temporary file is left. Both again through a symbolic link in another directory (the journal
 * and temporary files belong beside the file it points to; the commands after the kill name the
 * link or the file at random). And `read --force --out` aimed at the data file (by its path,
 * `./NAME`, a symbolic or a hard link): refused with exit 2, the file unchanged.
 *
 * A store framing (zarr) appends to a directory: "as it was" and "complete" then compare every
 * file of the store (names and bytes), so a chunk file left beyond the frames the metadata holds,
 * a temporary or a half-replaced metadata file counts as neither. Its trials are the appends
 * (SIGKILL, SIGINT/SIGTERM, through a link); the new-write and `read --out` trials are for files.
 *
 * Full disk: appends that run out of space at a random point (a file under a random file-size
 * limit, a store on a tmpfs of a random size): exit 1 in one line, the file or store as it was.
 *
 * Usage: deno task crash [--trials K] [--signal-trials K] [--full-disk-trials K]
 *   [--framing raw,gsd,...] [--seed S]
 * Prints one line per framing and a total; exits 1 when any file is neither original nor
 * complete.
 * @module
 */
import { parseArgs } from "node:util";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const PERMISSIONS = ["--allow-all"];

/** The native framings that can append. */
export const NATIVE_FRAMINGS = ["raw", "gsd", "f77", "ieeeio", "netcdf", "zarr"] as const;

/** The framings among them whose files are stores (directories). */
export const STORE_FRAMINGS: readonly string[] = ["zarr"];

/** Outcome counts of one framing's trials. */
export interface CrashCounts {
  /** Framing name. */
  framing: string;
  /** Trials run. */
  trials: number;
  /** Files found byte for byte as they were before the append. */
  original: number;
  /** Files found byte for byte as the complete append makes them. */
  complete: number;
  /** Files that were neither (the failures this tool looks for). */
  neither: number;
  /** Files that failed `read --verify`, or a journal or temporary file left behind. */
  unverified: number;
  /** Interrupted runs whose exit code or stderr was not the promised one. */
  badExits: number;
  /** Notes on each failure. */
  notes: string[];
}

/** The counts of `framing` before its first trial. */
function noCounts(framing: string): CrashCounts {
  return {
    framing,
    trials: 0,
    original: 0,
    complete: 0,
    neither: 0,
    unverified: 0,
    badExits: 0,
    notes: [],
  };
}

/** Writes the file every trial starts from: 3 frames of `framing` at `n` particles. */
async function writeOriginal(framing: string, n: string, path: string): Promise<void> {
  const made = await run([
    "write",
    "--force",
    "--framing",
    framing,
    "--n",
    n,
    "--frames",
    "3",
    path,
  ]);
  if (made.code !== 0) throw new Error(`cannot write ${path}: ${made.stderr}`);
}

/** Counts `bytes` as the original or the complete file; false (counted neither) for others. */
function tally(
  counts: CrashCounts,
  bytes: Uint8Array,
  original: Uint8Array,
  complete: Uint8Array,
): boolean {
  if (equal(bytes, original)) counts.original++;
  else if (equal(bytes, complete)) counts.complete++;
  else {
    counts.neither++;
    return false;
  }
  return true;
}

/**
 * Reads `path` back with `read --verify`, then lists what is left beside it (`leftovers`: names
 * below `dir`); when the read fails or anything is left, counts the trial unverified, notes why
 * and removes the leftovers.
 */
async function verifyNothingLeft(
  counts: CrashCounts,
  path: string,
  dir: string,
  leftoversOf: () => string[],
  note: (what: string) => void,
): Promise<void> {
  const v = await run(["read", "--verify", path]);
  const leftovers = leftoversOf();
  if (v.code !== 0 || leftovers.length > 0) {
    counts.unverified++;
    note(`verify exit ${v.code} ${v.stderr.trim()}; left: ${leftovers.join(" ")}`);
    for (const n of leftovers) Deno.removeSync(`${dir}/${n}`, { recursive: true });
  }
}

interface Run {
  code: number;
  signal: Deno.Signal | null;
  stderr: string;
}

function spawn(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSIONS, MAIN, ...args],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
}

async function finish(child: Deno.ChildProcess): Promise<Run> {
  const out = await child.output();
  return { code: out.code, signal: out.signal, stderr: new TextDecoder().decode(out.stderr) };
}

async function run(args: string[]): Promise<Run> {
  return await finish(spawn(args));
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The content of `path`: a file's bytes, or for a directory (a store) every file under it in
 * name order, each as its relative name, a NUL, its length and its bytes, so two stores compare
 * equal when they hold the same files with the same bytes.
 */
function snapshot(path: string): Uint8Array {
  if (!Deno.statSync(path).isDirectory) return Deno.readFileSync(path);
  const parts: Uint8Array[] = [];
  const enc = new TextEncoder();
  const walk = (rel: string) => {
    const entries = [...Deno.readDirSync(rel === "" ? path : `${path}/${rel}`)]
      .sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      const name = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) {
        parts.push(enc.encode(`${name}/\0`));
        walk(name);
        continue;
      }
      const bytes = Deno.readFileSync(`${path}/${name}`);
      parts.push(enc.encode(`${name}\0${bytes.length}\0`), bytes);
    }
  };
  walk("");
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Copies the file or directory `from` to `to` (replacing what is there). */
function copyTree(from: string, to: string): void {
  if (exists(to)) Deno.removeSync(to, { recursive: true });
  if (!Deno.statSync(from).isDirectory) return Deno.copyFileSync(from, to);
  Deno.mkdirSync(to);
  for (const e of Deno.readDirSync(from)) copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A small seeded generator (mulberry32) for reproducible kill moments. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `path` (or one of `paths`) exists or `child` ends; false when it ended first. */
async function appeared(path: string | string[], done: { ended: boolean }): Promise<boolean> {
  const paths = typeof path === "string" ? [path] : path;
  while (!done.ended) {
    if (paths.some(exists)) return true;
    await sleep(1);
  }
  return false;
}

/** Names in `dir` that sciobench leaves only by mistake (journals, temporary files, scratch). */
function leftoversIn(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.name.includes(".sciobench-")).map((e) =>
    e.name
  );
}

/**
 * The data file `${dir}/NAME` and the path commands name it by: itself, or with `link` a
 * symbolic link `${dir}/links/NAME` to it (made here).
 */
function dataPaths(dir: string, name: string, link: boolean): { file: string; named: string } {
  const file = `${dir}/${name}`;
  if (!link) return { file, named: file };
  Deno.mkdirSync(`${dir}/links`, { recursive: true });
  const named = `${dir}/links/${name}`;
  try {
    Deno.removeSync(named);
  } catch {
    // not there yet
  }
  Deno.symlinkSync(file, named);
  return { file, named };
}

function journalOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return `${path.slice(0, slash + 1)}.${path.slice(slash + 1)}.sciobench-journal`;
}

/** Options of {@link crashTrials}. */
export interface CrashOptions {
  /** Directory for the files (a fresh temporary one by default). */
  readonly dir?: string;
  /** Trials per framing. */
  readonly trials: number;
  /** Seed of the kill moments. */
  readonly seed?: number;
  /** Signals to kill with, picked at random per trial (default SIGKILL only). */
  readonly signals?: readonly Deno.Signal[];
  /** Frames per append (default 200). */
  readonly frames?: number;
  /** Append through a symbolic link in another directory (see {@link dataPaths}). */
  readonly link?: boolean;
}

/**
 * Runs `options.trials` interrupted appends on one framing (see the module doc) and counts how
 * the file ended.
 */
export async function crashTrials(framing: string, options: CrashOptions): Promise<CrashCounts> {
  const dir = options.dir ?? Deno.makeTempDirSync({ prefix: "sciobench-crash-" });
  const random = rng((options.seed ?? 1) * 7919 + framing.length);
  const signals = options.signals ?? ["SIGKILL"];
  const frames = String(options.frames ?? 200);
  const counts = noCounts(framing);
  const { file: path, named } = dataPaths(dir, `crash.${framing}`, options.link ?? false);
  await writeOriginal(framing, "64", path);
  const original = snapshot(path);
  const pristine = `${dir}/pristine-${framing}`;
  copyTree(path, pristine);
  const append = ["write", "--append", "--n", "64", "--frames", frames, named];
  // The complete result, and how long an append runs once its journal exists.
  const t0 = performance.now();
  const child = spawn(append);
  const state = { ended: false };
  const ended = finish(child).then((r) => {
    state.ended = true;
    return r;
  });
  // the journal's place is checked after each kill: here wherever it appears
  const journals = [journalOf(path), journalOf(named)];
  await appeared(journals, state);
  const t1 = performance.now();
  const full = await ended;
  const t2 = performance.now();
  if (full.code !== 0) throw new Error(`append to ${path} failed: ${full.stderr}`);
  const complete = snapshot(path);
  const startup = t1 - t0;
  const window = Math.max(5, t2 - t1);
  for (let trial = 0; trial < options.trials; trial++) {
    copyTree(pristine, path);
    const signal = signals[Math.floor(random() * signals.length)]!;
    const c = spawn(append);
    const s = { ended: false };
    const done = finish(c).then((r) => {
      s.ended = true;
      return r;
    });
    // One trial in five picks a moment anywhere from the start; the rest a moment of the append.
    if (random() < 0.2) await sleep(random() * (startup + window));
    else if (await appeared(journals, s)) await sleep(random() * window * 1.2);
    if (!s.ended) {
      try {
        c.kill(signal);
      } catch {
        // it just ended
      }
    }
    const r = await done;
    counts.trials++;
    const note = (what: string) => counts.notes.push(`trial ${trial} (${signal}): ${what}`);
    if (signal !== "SIGKILL" && r.code !== 0 && r.signal === null) {
      const want = signal === "SIGINT" ? 130 : 143;
      if (r.code !== want || r.stderr.trimEnd().split("\n").length !== 1) {
        counts.badExits++;
        note(`exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
      }
    }
    const target = random() < 0.5 ? path : named;
    const follow = random() < 0.5 ? ["info", target] : ["read", "--verify", target];
    const f = await run(follow);
    if (f.code !== 0) note(`${follow[0]} exited ${f.code}: ${f.stderr.trim()}`);
    const bytes = snapshot(path);
    if (!tally(counts, bytes, original, complete)) {
      note(
        `file of ${bytes.length} bytes is neither original (${original.length}) nor complete (${complete.length})`,
      );
      copyTree(path, `${dir}/neither-${framing}-${trial}`);
    }
    await verifyNothingLeft(counts, path, dir, () => [
      ...leftoversIn(dir),
      ...(named !== path ? leftoversIn(`${dir}/links`).map((n) => `links/${n}`) : []),
    ], note);
  }
  if (options.dir === undefined) Deno.removeSync(dir, { recursive: true });
  return counts;
}

/**
 * Signals (SIGINT or SIGTERM) during new and `--force` writes: counts targets that are neither
 * absent/original nor complete, and leftover temporary files.
 */
export async function signalWriteTrials(
  framing: string,
  trials: number,
  seed = 1,
  link = false,
): Promise<CrashCounts> {
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-crash-" });
  const random = rng(seed * 104729 + framing.length);
  const counts = noCounts(framing);
  const path = `${dir}/w.${framing}`;
  const named = link ? dataPaths(dir, `w.${framing}`, true).named : path;
  const args = ["write", "--force", "--framing", framing, "--n", "1024", "--frames", "400", path];
  if ((await run(args)).code !== 0) throw new Error(`cannot write ${path}`);
  // through a link: --force writes only (a new file is never made through a dangling link)
  if (link) args[args.length - 1] = named;
  const complete = Deno.readFileSync(path);
  const original = new TextEncoder().encode("the user's precious file\n");
  for (let trial = 0; trial < trials; trial++) {
    const fresh = !link && random() < 0.5;
    if (fresh) Deno.removeSync(path);
    else Deno.writeFileSync(path, original);
    const signal: Deno.Signal = random() < 0.5 ? "SIGINT" : "SIGTERM";
    const c = spawn(fresh ? args.filter((a) => a !== "--force") : args);
    const s = { ended: false };
    const done = finish(c).then((r) => {
      s.ended = true;
      return r;
    });
    const temp = `${dir}/.w.${framing}.sciobench-tmp-${c.pid}`;
    if (await appeared(temp, s)) await sleep(random() * 60);
    if (!s.ended) {
      try {
        c.kill(signal);
      } catch {
        // it just ended
      }
    }
    const r = await done;
    counts.trials++;
    const note = (what: string) => counts.notes.push(`trial ${trial} (${signal}): ${what}`);
    if (r.code !== 0 && r.signal === null && r.code !== (signal === "SIGINT" ? 130 : 143)) {
      counts.badExits++;
      note(`exit ${r.code}: ${r.stderr.trim()}`);
    }
    const bytes = exists(path) ? Deno.readFileSync(path) : undefined;
    const asBefore = fresh ? bytes === undefined : bytes !== undefined && equal(bytes, original);
    if (asBefore) counts.original++;
    else if (bytes !== undefined && equal(bytes, complete)) counts.complete++;
    else {
      counts.neither++;
      note(`target is ${bytes === undefined ? "missing" : `${bytes.length} bytes`}`);
    }
    const leftovers = leftoversIn(dir);
    if (link) {
      if (!Deno.lstatSync(named).isSymlink) {
        counts.unverified++;
        note(`the link ${named} was replaced by a file`);
        dataPaths(dir, `w.${framing}`, true);
      }
      leftovers.push(...leftoversIn(`${dir}/links`).map((n) => `links/${n}`));
    }
    if (leftovers.length > 0) {
      counts.unverified++;
      note(`left: ${leftovers.join(" ")}`);
      for (const n of leftovers) Deno.removeSync(`${dir}/${n}`);
    }
  }
  Deno.removeSync(dir, { recursive: true });
  return counts;
}

/**
 * `read --force --out OUT FILE` with OUT the data file by another spelling (its path, `./NAME`,
 * a symbolic link, a hard link) and FILE the file or the link: each must be refused with exit 2
 * and one line, and leave the file as it was (counted as original; else neither or a bad exit).
 */
export async function outTrials(framing: string, trials: number, seed = 1): Promise<CrashCounts> {
  const dir = Deno.makeTempDirSync({ prefix: "sciobench-crash-" });
  const random = rng(seed * 15485863 + framing.length);
  const counts = noCounts(framing);
  const { file, named } = dataPaths(dir, `o.${framing}`, true);
  const made = await run(["write", "--framing", framing, "--n", "64", "--frames", "3", file]);
  if (made.code !== 0) throw new Error(`cannot write ${file}: ${made.stderr}`);
  Deno.linkSync(file, `${dir}/hard.${framing}`);
  const original = Deno.readFileSync(file);
  const spellings = [file, `${dir}/./o.${framing}`, named, `${dir}/hard.${framing}`];
  for (let trial = 0; trial < trials; trial++) {
    const out = spellings[Math.floor(random() * spellings.length)]!;
    const data = random() < 0.5 ? file : named;
    const r = await run(["read", "--force", "--out", out, data]);
    counts.trials++;
    const note = (what: string) => counts.notes.push(`trial ${trial} (--out ${out}): ${what}`);
    if (r.code !== 2 || r.stderr.trimEnd().split("\n").length !== 1) {
      counts.badExits++;
      note(`exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
    }
    if (equal(Deno.readFileSync(file), original)) counts.original++;
    else {
      counts.neither++;
      note("the data file was changed");
      Deno.writeFileSync(file, original);
    }
  }
  Deno.removeSync(dir, { recursive: true });
  return counts;
}

/** Frames of a full-disk trial's append (N = 16). */
const FULL_DISK_FRAMES = 300;

/** Files and directories under `path` (itself included). */
function inodes(path: string): number {
  if (!Deno.statSync(path).isDirectory) return 1;
  let n = 1;
  for (const e of Deno.readDirSync(path)) n += inodes(`${path}/${e.name}`);
  return n;
}

/** `args` run with a file-size limit of `kib` KiB (RLIMIT_FSIZE, SIGXFSZ ignored): EFBIG past it. */
function runLimited(args: string[], kib: number): Promise<Run> {
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      `trap '' XFSZ; ulimit -f ${Math.max(1, Math.ceil(kib * 2))}; exec "$@"`,
      "sh",
      ...[Deno.execPath(), "run", "--quiet", ...PERMISSIONS, MAIN, ...args],
    ],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  return finish(child);
}

/**
 * Appends that run out of space at a random point: a file under a random file-size limit between
 * its size and its size after the append (EFBIG, as a full disk); a store (zarr) on a tmpfs
 * remounted with a random number of inodes between what the store holds and what the append
 * makes (ENOSPC, the full disk's error, at a random chunk file; needs mount, as root). Each must end with exit 0 (complete) or 1 in one line,
 * the file or store as it was or complete, readable with `read --verify`, nothing left beside it.
 * Returns the reason instead where no tmpfs can be mounted.
 */
export async function fullDiskTrials(
  framing: string,
  trials: number,
  seed = 1,
): Promise<CrashCounts | string> {
  const store = STORE_FRAMINGS.includes(framing);
  const work = Deno.makeTempDirSync({ prefix: "sciobench-full-" });
  const dir = store ? `${work}/disk` : work;
  const counts = noCounts(framing);
  const mount = (files: number, remount: boolean) =>
    new Deno.Command("mount", {
      args: [
        ...["-t", "tmpfs", "-o", `${remount ? "remount," : ""}size=256m,nr_inodes=${files}`],
        ...["tmpfs", dir],
      ],
      stderr: "piped",
    }).outputSync();
  try {
    if (store) {
      Deno.mkdirSync(dir);
      const m = mount(1 << 20, false);
      if (m.code !== 0) return `cannot mount a tmpfs: ${new TextDecoder().decode(m.stderr).trim()}`;
    }
    const random = rng(seed * 104729 + framing.length);
    const path = `${dir}/full.${framing}`;
    await writeOriginal(framing, "16", path);
    const original = snapshot(path);
    const pristine = `${work}/pristine`;
    copyTree(path, pristine);
    const append = ["write", "--append", "--n", "16", "--frames", String(FULL_DISK_FRAMES), path];
    const whole = await run(append);
    if (whole.code !== 0) throw new Error(`append to ${path} failed: ${whole.stderr}`);
    const complete = snapshot(path);
    const before = Deno.statSync(pristine).size, after = Deno.statSync(path).size;
    // the tmpfs's root, the store's files before and after the append, and room for its journal
    // and temporary files: some appends complete
    const [fewest, most] = store ? [1 + inodes(pristine), 1 + inodes(path) + 24] : [0, 0];
    for (let trial = 0; trial < trials; trial++) {
      copyTree(pristine, path);
      let r: Run;
      if (store) {
        mount(fewest + Math.floor(random() * (most - fewest)), true);
        r = await run(append);
      } else {
        r = await runLimited(append, (before + random() * (after - before) * 1.1) / 1024);
      }
      counts.trials++;
      const note = (what: string) => counts.notes.push(`trial ${trial}: ${what}`);
      if (r.code !== 0 && (r.code !== 1 || r.stderr.trimEnd().split("\n").length !== 1)) {
        counts.badExits++;
        note(`exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
      }
      if (store) mount(1 << 20, true);
      if (!tally(counts, snapshot(path), original, complete)) {
        note(`neither original nor complete (exit ${r.code}: ${r.stderr.trim()})`);
      }
      await verifyNothingLeft(counts, path, dir, () => leftoversIn(dir), note);
    }
    return counts;
  } finally {
    if (store) new Deno.Command("umount", { args: ["-l", dir] }).outputSync();
    Deno.removeSync(work, { recursive: true });
  }
}

function line(kind: string, c: CrashCounts): string {
  return `${kind.padEnd(14)} ${c.framing.padEnd(7)} trials ${c.trials}: original ${c.original}, ` +
    `complete ${c.complete}, neither ${c.neither}, unverified or left over ${c.unverified}, ` +
    `bad exits ${c.badExits}`;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      trials: { type: "string", default: "20" },
      framing: { type: "string", default: NATIVE_FRAMINGS.join(",") },
      seed: { type: "string", default: "1" },
      "signal-trials": { type: "string", default: "10" },
      "full-disk-trials": { type: "string", default: "10" },
    },
  });
  const trials = Number(values.trials);
  const seed = Number(values.seed);
  let neither = 0, total = 0, bad = 0;
  for (const framing of values.framing.split(",")) {
    const store = STORE_FRAMINGS.includes(framing);
    const signalTrials = Number(values["signal-trials"]);
    for (
      const [kind, counts] of [
        ["SIGKILL", await crashTrials(framing, { trials, seed })],
        [
          "INT/TERM",
          await crashTrials(framing, {
            trials: Number(values["signal-trials"]),
            seed,
            signals: ["SIGINT", "SIGTERM"],
          }),
        ],
        ...(store ? [] : [
          [
            "write INT/TERM",
            await signalWriteTrials(framing, signalTrials, seed),
          ] as const,
        ]),
        ["link SIGKILL", await crashTrials(framing, { trials, seed, link: true })],
        [
          "link INT/TERM",
          await crashTrials(framing, {
            trials: Number(values["signal-trials"]),
            seed,
            signals: ["SIGINT", "SIGTERM"],
            link: true,
          }),
        ],
        ...(store ? [] : [
          [
            "link --force",
            await signalWriteTrials(framing, signalTrials, seed, true),
          ] as const,
          ["read --out", await outTrials(framing, signalTrials, seed)] as const,
        ]),
      ] as const
    ) {
      console.log(line(kind, counts));
      for (const n of counts.notes) console.log(`  ${n}`);
      neither += counts.neither;
      bad += counts.unverified + counts.badExits;
      total += counts.trials;
    }
    const full = await fullDiskTrials(framing, Number(values["full-disk-trials"]), seed);
    if (typeof full === "string") {
      console.log(`${"full disk".padEnd(14)} ${framing}: skipped: ${full}`);
    } else {
      console.log(line("full disk", full));
      for (const n of full.notes) console.log(`  ${n}`);
      neither += full.neither;
      bad += full.unverified + full.badExits;
      total += full.trials;
    }
  }
  console.log(
    `total: ${total} trials, ${neither} files neither original nor complete, ${bad} other failures`,
  );
  if (neither + bad > 0) Deno.exit(1);
}
