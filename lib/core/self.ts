/**
 * The command line that runs this same sciobench again (reader processes, the library child):
 * the compiled binary itself, or `deno run` with this process's permissions and main.ts.
 * @module
 */

/** Environment variable naming the program file children run instead of main.ts (a CLI entry with more backends). */
export const SELF_ENV = "SCIOBENCH_SELF";

/** Permission names passed on to child processes when this process holds them in full. */
const PERMISSION_NAMES = ["read", "write", "ffi", "env", "sys", "run", "net"] as const;

/** Program and leading arguments that run this same sciobench again (deno run or the compiled binary). */
export function selfCommand(): { cmd: string; args: string[] } {
  if (Deno.build.standalone) return { cmd: Deno.execPath(), args: [] };
  const granted = PERMISSION_NAMES
    .filter((name) => Deno.permissions.querySync({ name }).state === "granted");
  // All of them: this process runs with --allow-all, which alone also opens /dev (/dev/shm).
  const flags = granted.length === PERMISSION_NAMES.length
    ? ["--allow-all"]
    : granted.map((name) => `--allow-${name}`);
  // The CLI entry next to lib/, unless this module is itself the main module (a bundle), or an
  // entry that registers more backends named itself in SCIOBENCH_SELF (its children need them).
  const here = import.meta.url;
  let entry: string | undefined;
  try {
    entry = Deno.env.get(SELF_ENV);
  } catch {
    entry = undefined;
  }
  const script = entry
    ? new URL(entry, "file:///").href
    : here === Deno.mainModule
    ? here
    : new URL("../../main.ts", here).href;
  const path = script.startsWith("file:") ? decodeURIComponent(new URL(script).pathname) : script;
  return { cmd: Deno.execPath(), args: ["run", "--quiet", ...flags, path] };
}
