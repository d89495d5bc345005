/**
 * V8's first major garbage collection runs untimed in `table`, `read` and `records`, before the
 * first timed phase, and none runs inside a timed phase of a short run: the CLI runs with
 * V8's `--trace-gc` (its stdout unbuffered by stdbuf, so its lines fall in order among
 * sciobench's `SCIOBENCH_TRACE_PHASES` lines on stderr, both on one pipe). Left to itself, the
 * first mark-compact came inside the first cell's timed phases. With V8's `--trace-deopt`: no
 * timed read phase runs code V8 had to drop (a branch the warm-ups never took). Each check is of
 * V8's schedule on this machine, and passes at the first of a few tries (`onAnyOfTries`): a busy
 * machine can delay a collection once; a warm-up that misses a step misses it every try.
 * @module
 */
import assert from "node:assert/strict";
import { settleHeap } from "../lib/core/heap.ts";
import { type AuditPhase, TRACE_PHASES_ENV } from "../lib/sys/audit.ts";
import { MAIN, onAnyOfTries, PERMISSIONS, runCli, tempDir } from "./_helpers.ts";

/** A row's audit trail as JSON results carry it. */
interface AuditTrail {
  readonly phases: readonly AuditPhase[];
}

/** stdbuf (coreutils), or null with why not. */
const STDBUF_MISSING = (() => {
  try {
    new Deno.Command("stdbuf", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return null;
  } catch {
    return "stdbuf (coreutils) not found";
  }
})();

/** The lines of `sciobench ARGS` run with V8's `v8Flags`, stdout and stderr in order. */
async function tracedRun(
  args: string[],
  cwd: string,
  v8Flags = "--trace-gc",
): Promise<string[]> {
  const out = await new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'exec stdbuf -o0 "$@" 2>&1',
      "sh",
      Deno.execPath(),
      "run",
      "--quiet",
      `--v8-flags=${v8Flags}`,
      ...PERMISSIONS,
      MAIN,
      ...args,
    ],
    cwd,
    stdout: "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1", [TRACE_PHASES_ENV]: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text.slice(-2000));
  return text.split("\n");
}

const isMajor = (line: string) => line.includes("Mark-Compact");
const phaseOf = (line: string) => /sciobench: trace: phase (.*) at [\d.]+ s$/.exec(line)?.[1];

/**
 * Checks the trace: a major collection before the first timed phase, and none inside a timed
 * phase (between its start and the next phase's).
 */
function assertSettled(lines: readonly string[], what: string): void {
  const firstTimed = lines.findIndex((l) => phaseOf(l)?.endsWith("(timed)"));
  assert.ok(firstTimed > 0, `${what}: no timed phase traced`);
  const settled = lines.findIndex((l) => /sciobench: trace: heap settled: collected at/.test(l));
  assert.ok(
    settled >= 0 && settled < firstTimed,
    `${what}: no major collection brought forward (line ${settled}) before the first timed phase`,
  );
  const firstMajor = lines.findIndex(isMajor);
  assert.ok(
    firstMajor >= 0 && firstMajor < firstTimed,
    `${what}: the first major collection (line ${firstMajor}) is not before the first timed ` +
      `phase (line ${firstTimed})`,
  );
  let timed: string | undefined;
  for (const line of lines) {
    const phase = phaseOf(line);
    if (phase !== undefined) timed = phase.endsWith("(timed)") ? phase : undefined;
    else if (isMajor(line) && timed !== undefined) {
      assert.fail(`${what}: a major collection inside the timed phase ${timed}: ${line}`);
    }
  }
}

/** A test that `sciobench ARGS` (in a scratch directory) settles the heap before its phases. */
function settledTest(name: string, args: string[]): void {
  Deno.test({
    name,
    ignore: STDBUF_MISSING !== null,
    fn: () =>
      onAnyOfTries(async () => {
        using d = tempDir("sciobench-heap-");
        assertSettled(await tracedRun(args, d.path), args[0]!);
      }),
  });
}

settledTest(
  "heap: table's warm-up runs V8's first major collection, none in a timed phase",
  ["table", "--framing", "raw,gsd", "--size", "16M", "--n", "32^2", "--cache", "warm"],
);

settledTest(
  "heap: records runs V8's first major collection before its cells, none in a timed phase",
  ["records", "--framing", "raw,gsd", "--shape", "200x100x100", "--repeat", "2"],
);

Deno.test({
  name: "heap: read's warm-up runs V8's first major collection, none in a timed phase",
  ignore: STDBUF_MISSING !== null,
  async fn() {
    using d = tempDir("sciobench-heap-");
    const path = `${d.path}/t.raw`;
    const w = await runCli(["write", "--framing", "raw", "--n", "32^2", "--size", "32M", path]);
    assert.equal(w.code, 0, w.stderr);
    await onAnyOfTries(async () => {
      const lines = await tracedRun(["read", "--verify", "--format", "csv", path], d.path);
      assertSettled(lines, "read");
    });
  },
});

Deno.test({
  name: "jit: no read or random phase runs deoptimized code (the warm-ups took every branch)",
  ignore: STDBUF_MISSING !== null,
  fn: () =>
    onAnyOfTries(async () => {
      using d = tempDir("sciobench-jit-");
      const lines = await tracedRun(
        [
          ...["table", "--framing", "raw,gsd", "--size", "16M", "--n", "32^2", "--repeat", "2"],
          ...["--format", "csv"],
        ],
        d.path,
        "--trace-deopt",
      );
      let phase: string | undefined;
      let reads = 0;
      for (const line of lines) {
        phase = phaseOf(line) ?? phase;
        if (phaseOf(line) === "read (timed)") reads++;
        if (line.includes("bailout") && /^(read|random) \(timed\)$/.test(phase ?? "")) {
          assert.fail(`a deoptimization in the timed phase ${phase}: ${line.slice(0, 300)}`);
        }
      }
      assert.equal(reads, 4, "read phases traced");
    }),
});

Deno.test("heap: the first cell's read phase touches no new heap pages", async () => {
  await onAnyOfTries(firstReadFaultsFew);
});

/** Runs a table and checks raw's first read phase for page faults. */
async function firstReadFaultsFew(): Promise<void> {
  using d = tempDir("sciobench-heap-");
  const out = `${d.path}/t.json`;
  const r = await runCli(
    [
      ...["table", "--framing", "raw,gsd", "--size", "32M", "--n", "32^2", "--audit"],
      ...["--format", "json", "-o", out, "--dir", d.path],
    ],
  );
  assert.equal(r.code, 0, r.stderr);
  const rows = (JSON.parse(Deno.readTextFileSync(out)) as {
    rows: { framing: string; audit: AuditTrail }[];
  }).rows;
  const raw = rows.find((row) => row.framing === "raw")!;
  const read = raw.audit.phases.find((p) => p.name === "read")!;
  const [start, end] = read.readings!.minorFaults;
  // the young generation's pages left untouched by the warm-up: 1,200 faults here, 3x slower
  // frame reads; touched: 20
  assert.ok(end - start < 400, `${end - start} minor faults in raw's first read phase`);
}

Deno.test("heap: settleHeap runs a major collection", async () => {
  const settled = await settleHeap();
  assert.equal(settled.collected, true);
  assert.ok(settled.seconds < 10, `${settled.seconds} s`);
});
