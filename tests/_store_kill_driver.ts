/**
 * Driver of tests/zarr_append_test.ts: appends `Deno.args[1]` table frames (N = 8) to the zarr
 * store `Deno.args[0]` and dies (exit 9, no cleanup, as after SIGKILL) when the process opens a
 * file whose path ends with `Deno.args[2]` (`-` for never: it dies before closing the sink,
 * its chunks written and synced, its metadata not).
 */
import { backendByName } from "../lib/backends/registry.ts";
import { observeIo } from "../lib/sys/libc.ts";
import { TableFrames } from "../lib/workloads/table/frames.ts";

const [path, count, at] = Deno.args as [string, string, string];
const none = () => {};
observeIo({
  open(_fd, opened) {
    if (at !== "-" && opened.endsWith(at)) Deno.exit(9);
  },
  close: none,
  read: none,
  write: none,
  sync: none,
  resident: none,
  librarySync: none,
});
const frames = new TableFrames(8, 7);
const sink = backendByName("zarr").openWriter(path, { create: "append", fsync: "end" });
for (let i = 0; i < Number(count); i++) sink.writeFrame(frames.frame(3 + i));
if (at === "-") Deno.exit(9);
sink.close();
