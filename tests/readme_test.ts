/**
 * README.md as a manual: at most 500 lines, a table of contents whose links reach its headings,
 * every link into docs/ reaching a file and heading there, and every command of its ```sh blocks
 * running as written.
 *
 * The rule for commands: every line of a block fenced ```sh is a command (a trailing `\` joins the
 * next line; `#` lines are comments) and runs, block by block in order, with `sh -c` in the
 * checkout, as a user of the checkout types it; blocks fenced ```bash (batch scripts, launchers)
 * are only parsed (`bash -n`), and ```console blocks (shown output) are not run. The commands
 * find, first on PATH:
 * - `sciobench`: main.ts run with the task's permissions, in the block's temporary directory, so
 *   the files a recipe makes (`traj.gsd`, `--out runs.jsonl`) land there;
 * - `npx -y deno@VERSION` and `deno`: this Deno (VERSION must be its version).
 *
 * Long runs are made small by substitution, never by editing the README: every `--size LIST`
 * becomes `--size 1MiB` (a cell still writes at least one frame) and every `--repeat K` with K > 2
 * becomes `--repeat 2`; `SCRATCH` is the block's temporary directory. Every command exits 0; one
 * that runs sciobench, npx or deno also leaves output: in the file its `--out`/`-o` names, else on
 * stdout (on stderr for a task that reports only there); CSV has a header and a row, JSON and JSON
 * lines parse and hold rows. A command naming a peer (`--framing`, `--peer`) or fio
 * (`--baseline fio`) that is not installed is skipped with a message (a failure with
 * SCIOBENCH_REQUIRE_PEERS=1).
 */
import assert from "node:assert/strict";
import { backendByName } from "../lib/backends/registry.ts";
import { commandMissing, MAIN, peerUsable, PERMISSIONS, tempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const README = Deno.readTextFileSync(`${ROOT}/README.md`);
/** Most lines the README may have. */
const MAX_LINES = 500;
/** docs/ pages generated from the code by a task; a link to them is allowed before they exist. */
const GENERATED = ["docs/cli.md", "docs/columns.md"];

/** One fenced block: its info string (`sh`, `bash`, ...) and its text. */
interface Block {
  readonly lang: string;
  readonly text: string;
}

/** Every fenced code block of a Markdown text, in order. */
function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1]!,
    text: m[2]!,
  }));
}

/** The commands of a shell block: continuation lines joined, blank and comment lines dropped. */
export function commandsOf(text: string): string[] {
  return text.replace(/\\\n\s*/g, "").split("\n").map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("#")
  );
}

/** A command made small: sizes to 1 MiB, repeats to at most 2 (the documented substitution). */
export function smaller(command: string): string {
  return command.replace(/--size[ =]\S+/g, "--size 1MiB").replace(
    /--repeat[ =](\d+)/g,
    (all, k: string) => (Number(k) > 2 ? "--repeat 2" : all),
  );
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

/** The anchors of every heading of a Markdown text (outside code blocks). */
function anchors(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

/** The values of `--NAME LIST` (or `--NAME=LIST`) in a command, split at commas. */
function listOption(command: string, name: string): string[] {
  return [...command.matchAll(new RegExp(`--${name}[ =](\\S+)`, "g"))].flatMap((m) =>
    m[1]!.split(",")
  );
}

/** Why a command cannot run here (a peer or fio it names is missing), or null. */
function missingPeer(command: string): { name: string; why: string } | null {
  if (!/^sciobench /.test(command) && !/ task sciobench /.test(command)) return null;
  for (const name of [...listOption(command, "framing"), ...listOption(command, "peer")]) {
    const why = backendByName(name).unavailable();
    if (why !== null) return { name, why };
  }
  if (/--baseline[ =]fio\b/.test(command)) {
    const why = commandMissing("fio");
    if (why !== null) return { name: "fio", why };
  }
  return null;
}

/** The file a command's `--out FILE` or `-o FILE` names, if any. */
function outFile(command: string): string | null {
  const m = /(?:--out|-o)[ =](\S+)/.exec(command);
  return m ? m[1]!.replace(/^"|"$/g, "") : null;
}

/** Asserts that `text`, what `command` printed or wrote, is real output of its format. */
function assertOutput(command: string, text: string): void {
  assert.ok(text.trim() !== "", `${command}: no output`);
  const format = /--format[ =](\S+)/.exec(command)?.[1];
  if (format === "csv") {
    assert.ok(text.trim().split("\n").length >= 2, `${command}: a CSV header and a row`);
  } else if (format === "json") {
    const doc = JSON.parse(text) as { rows?: unknown[] };
    assert.ok((doc.rows?.length ?? 0) > 0, `${command}: JSON rows`);
  } else if (format === "jsonl") {
    const lines = text.trim().split("\n").map((l) => JSON.parse(l) as unknown);
    assert.ok(lines.length >= 2, `${command}: the meta line and rows`);
  }
}

/** A directory of the programs the README's commands call, ahead of PATH. */
function shims(dir: string, workDir: string): string {
  const deno = Deno.execPath();
  const write = (name: string, body: string) => {
    Deno.writeTextFileSync(`${dir}/${name}`, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  };
  write(
    "sciobench",
    `cd '${workDir}' && exec '${deno}' run --quiet ${PERMISSIONS.join(" ")} '${MAIN}' "$@"`,
  );
  write("deno", `exec '${deno}' "$@"`);
  write(
    "npx",
    [
      `if [ "$1" = -y ] && [ "$2" = deno@${Deno.version.deno} ]; then shift 2; exec '${deno}' "$@"; fi`,
      `echo "readme_test: npx $* is not 'npx -y deno@${Deno.version.deno}'" >&2`,
      "exit 127",
    ].join("\n"),
  );
  return dir;
}

Deno.test("README: at most 500 lines, a table of contents reaching its headings", () => {
  const lines = README.split("\n").length;
  assert.ok(lines <= MAX_LINES, `README.md has ${lines} lines, more than ${MAX_LINES}`);
  const contents = /^## Contents\n([\s\S]*?)^## /m.exec(README)?.[1];
  assert.ok(contents, "a '## Contents' section");
  const own = anchors(README);
  const listed = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  const sections = [...README.matchAll(/^## (.+)$/gm)].map((m) => anchor(m[1]!)).filter((a) =>
    a !== "contents"
  );
  assert.deepEqual(listed.filter((a) => sections.includes(a)), sections, "every section listed");
  for (const a of listed) assert.ok(own.has(a), `contents link #${a} reaches a heading`);
});

Deno.test("README and docs/: every relative link reaches a file and its heading", () => {
  const pages = [
    "README.md",
    ...[...Deno.readDirSync(`${ROOT}/docs`)].filter((e) => e.name.endsWith(".md")).map((e) =>
      `docs/${e.name}`
    ),
  ];
  for (const page of pages) {
    const text = Deno.readTextFileSync(`${ROOT}/${page}`);
    const prose = text.replace(/^```[\s\S]*?^```$/gm, "");
    const base = page.includes("/") ? page.slice(0, page.lastIndexOf("/") + 1) : "";
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1]!;
      if (/^[a-z]+:/.test(link)) continue;
      const [file, hash] = link.split("#") as [string, string | undefined];
      const target = file === "" ? page : new URL(file, `file:///${base}`).pathname.slice(1);
      if (GENERATED.includes(target) && hash === undefined) continue;
      let body: string;
      try {
        body = Deno.readTextFileSync(`${ROOT}/${target}`);
      } catch {
        assert.fail(`${page}: link ${link}: ${target} does not exist`);
      }
      if (hash !== undefined && target.endsWith(".md")) {
        assert.ok(anchors(body).has(hash), `${page}: link ${link}: no heading #${hash}`);
      }
    }
  }
});

Deno.test("README: the substitution makes runs small and leaves other words alone", () => {
  assert.equal(
    smaller("sciobench table --size 1GiB,4GiB --repeat 5 --n 128^2"),
    "sciobench table --size 1MiB --repeat 2 --n 128^2",
  );
  assert.equal(
    smaller("sciobench table --repeat 2 --sample 1GiB"),
    "sciobench table --repeat 2 --sample 1GiB",
  );
  assert.deepEqual(commandsOf("# a comment\nsciobench a \\\n  --b c\n\nnpx x\n"), [
    "sciobench a --b c",
    "npx x",
  ]);
});

const SH_BLOCKS = blocks(README).filter((b) => b.lang === "sh");

Deno.test("README: the bash blocks, not run here (batch scripts, launchers), are valid shell", async () => {
  const scripts = blocks(README).filter((b) => b.lang === "bash");
  assert.ok(scripts.length > 0, "the Slurm script and the MPICH launch");
  for (const script of scripts) {
    const out = await new Deno.Command("/bin/bash", {
      args: ["-n", "-c", script.text],
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, `${script.text}\n${new TextDecoder().decode(out.stderr)}`);
    assert.match(script.text, /sciobench|main\.ts/, "each runs sciobench");
  }
});

Deno.test("README: every sh block's commands run as written and print results", async (t) => {
  assert.ok(SH_BLOCKS.length >= 5, "the quick start, install and recipes have sh blocks");
  const ran: string[] = [];
  for (const [i, block] of SH_BLOCKS.entries()) {
    using work = tempDir("sciobench-readme-");
    using bin = tempDir("sciobench-readme-bin-");
    const path = `${shims(bin.path, work.path)}:${Deno.env.get("PATH") ?? ""}`;
    for (const command of commandsOf(block.text)) {
      await t.step(`block ${i + 1}: ${command}`, async () => {
        const missing = missingPeer(command);
        if (missing !== null && !peerUsable(missing.name, missing.why)) return;
        const out = await new Deno.Command("/bin/sh", {
          args: ["-c", smaller(command)],
          cwd: ROOT,
          env: { PATH: path, SCRATCH: work.path, NO_COLOR: "1" },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const dec = new TextDecoder();
        const stdout = dec.decode(out.stdout);
        const stderr = dec.decode(out.stderr);
        assert.equal(out.code, 0, `${command}\nexit ${out.code}\n${stderr}`);
        assert.doesNotMatch(stderr, /error:/, command);
        ran.push(command);
        if (!/(^|&& )(sciobench|npx|deno) /.test(command)) return;
        const file = outFile(command);
        if (file !== null) {
          const resolved = file.startsWith("/") ? file : `${work.path}/${file}`;
          assertOutput(command, Deno.readTextFileSync(resolved));
        } else {
          // A task that reports on stderr alone (bundle) shows its result there.
          assertOutput(command, stdout.trim() === "" ? stderr : stdout);
        }
      });
    }
  }
  assert.ok(ran.some((c) => c.startsWith("sciobench table")), "a table recipe ran");
});
