/**
 * The reaper of an MPI run's scratch directory: a small shell process beside the first rank of
 * each host, in a session of its own, that removes the directory (every rank's files) when that
 * rank ends without saying it finished: killed by SIGKILL, or by a launcher that stops the job
 * after another rank died. It is started before the directory exists and told it finished only
 * after the directory is removed, so no moment leaves the directory without someone to remove it;
 * it removes only what is this run's (see {@link ReaperTarget}).
 * @module
 */

/** What a reaper removes when its rank ends without finishing. */
export interface ReaperTarget {
  /** The scratch directory. */
  readonly dir: string;
  /**
   * The name `dir` is made under while its owner record is written (then renamed to `dir`), or
   * "" for a directory made by mkdir at its final name.
   */
  readonly temp: string;
  /**
   * The owner record the rank writes into `temp` before the rename: the reaper takes a
   * directory holding exactly this record as the rank's (another's of the same name never is),
   * until the rank claims `dir` outright. "" when whatever is at `dir` is the run's from the
   * start (a path rank 0 made and broadcast).
   */
  readonly owner: string;
}

/** A running reaper of one scratch directory. */
export interface Reaper {
  /**
   * Tells the reaper `dir` now exists under its final name and is the rank's: from here on it
   * removes whatever is left of it, owner record or not.
   */
  claim(): Promise<void>;
  /** Tells the reaper the rank removed the directory or never made it: it exits without acting. */
  finish(): Promise<void>;
}

/**
 * The reaper's script (`$1` the directory, `$2` its temporary name or "", `$3` the owner record
 * or ""): reads `mine` and `done` lines until `done` (exit) or the end of input (the rank ended).
 * Then it removes the temporary directory where it holds nothing or the rank's owner record,
 * whole or torn (a start of it: the rank was killed while writing it), with `rmdir`, so never a
 * directory with another's files; and the directory when it is the rank's:
 * claimed, holding the rank's owner record, or `$3` empty. It says so in one line first: a
 * launcher stops forwarding the rank's stderr soon after the rank ends (MPICH's Hydra), and the
 * removal of a large directory would lose that race. It ignores SIGPIPE (and SIGHUP): a launcher
 * that has already gone (Open MPI's) leaves that stderr without a reader, and the line must not
 * stop the removal.
 */
const REAPER_SCRIPT = [
  "trap '' PIPE HUP",
  'mine=; [ -z "$3" ] && mine=1',
  'while read -r word; do case "$word" in done) exit 0 ;; mine) mine=1 ;; esac; done',
  'if [ -n "$2" ] && [ -d "$2" ]; then',
  '  case "$3" in "$(cat -- "$2/owner" 2>/dev/null)"*) rm -f -- "$2/owner" ;; esac',
  '  rmdir -- "$2" 2>/dev/null',
  "fi",
  '[ -z "$mine" ] && [ "$(cat -- "$1/owner" 2>/dev/null)" = "$3" ] && mine=1',
  '[ -n "$mine" ] && [ -d "$1" ] || exit 0',
  'echo "sciobench: removing scratch directory $1: its run ended without removing it (a rank ' +
  'was killed)" >&2',
  'rm -rf -- "$1"',
].join("\n");

/**
 * Starts the reaper of `target` in a session of its own (`detached`: `setsid` before the script
 * runs, so it is done when this returns), so that a launcher killing the rank's process group
 * spares it; undefined where it cannot start.
 */
export function startReaper(target: ReaperTarget): Reaper | undefined {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("/bin/sh", {
      args: ["-c", REAPER_SCRIPT, "sciobench-reaper", target.dir, target.temp, target.owner],
      stdin: "piped",
      stdout: "null",
      stderr: "inherit",
      detached: true,
    }).spawn();
  } catch {
    return undefined;
  }
  child.unref();
  const stdin = child.stdin.getWriter();
  const say = async (word: string, last: boolean) => {
    try {
      await stdin.write(new TextEncoder().encode(`${word}\n`));
      if (last) await stdin.close();
    } catch {
      // the reaper is gone already
    }
  };
  return { claim: () => say("mine", false), finish: () => say("done", true) };
}
