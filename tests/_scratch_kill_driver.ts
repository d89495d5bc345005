/**
 * A driver run by tests/scratch_reaper_test.ts: SIGKILLs itself at one moment of a scratch
 * directory's life, so the test can see what the rank's reaper leaves. Arguments: the parent,
 * then a JSON object. With `reaper` (a ReaperTarget) it starts that reaper, tells it `claim`
 * when asked, and dies. Otherwise it makes a scratch directory as one rank of a pretend parallel
 * run (`rank`, `firstOnHost`, `path`: what the broadcast gives a rank other than 0) and dies at
 * `at`: "agree", "check" or "work" (the last after writing a file).
 * @module
 */
import { type ReaperTarget, startReaper } from "../lib/io/reaper.ts";
import { type ScratchShare, withScratchDir } from "../lib/io/scratch.ts";

const [parent, json] = Deno.args as [string, string];
const o = JSON.parse(json) as {
  rank: number;
  firstOnHost: boolean;
  path: string;
  at: string;
  reaper?: ReaperTarget;
  claim?: boolean;
};
const die = (at: string) => {
  if (o.at === at) Deno.kill(Deno.pid, "SIGKILL");
};
if (o.reaper) {
  const reaper = startReaper(o.reaper);
  if (o.claim) await reaper?.claim();
  Deno.kill(Deno.pid, "SIGKILL");
}
const share: ScratchShare = {
  rank: o.rank,
  firstOnHost: o.firstOnHost,
  agree(path) {
    die("agree");
    return o.rank === 0 ? path : o.path;
  },
  check() {
    die("check");
  },
};
await withScratchDir(parent, async (dir) => {
  Deno.writeTextFileSync(`${dir}/r${o.rank}`, "data");
  die("work");
  await new Promise((r) => setTimeout(r, 10));
}, share);
console.log("finished");
