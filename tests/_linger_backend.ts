/**
 * `linger`: raw whose writer, on world rank 0, waits half a second at the close of a table's
 * warm-up file and then looks for the file by its path, as a library that reopens by path does
 * (PnetCDF's begin_indep_data); when it is gone it says so on stderr ("linger: ... gone").
 * tests/mpi_table_test.ts runs it under MPI to show that no rank removes the shared warm-up
 * directory while another still works in it. Registered on import with registerBackend and
 * nothing else; run as a program, this module is the sciobench CLI with `linger` registered.
 * @module
 */
import type { Backend } from "../lib/backends/backend.ts";
import { backendByName, registerBackend } from "../lib/backends/registry.ts";
import { runCli } from "../lib/cli/main.ts";
import { world } from "../lib/mpi/world.ts";

/** What the writer prints when its warm-up file went while it was still open. */
export const LINGER_GONE = "linger: the warm-up file was removed while rank 0 still wrote it";

const raw = backendByName("raw");

/** raw under the name `linger`, rank 0's warm-up close slowed and checked. */
export const lingerBackend: Backend = {
  ...raw,
  name: "linger",
  description: "raw, rank 0 slow to close its warm-up file (tests/_linger_backend.ts)",
  magic: [],
  detect: undefined,
  openWriter(path, options) {
    const sink = raw.openWriter(path, options);
    if (world().rank !== 0 || !path.includes("warm-up.")) return sink;
    const close = sink.close.bind(sink);
    sink.close = () => {
      const until = Date.now() + 500;
      while (Date.now() < until) {
        // the other ranks finish their warm-up meanwhile
      }
      try {
        Deno.statSync(path);
      } catch {
        console.error(LINGER_GONE);
      }
      close();
    };
    return sink;
  },
};

registerBackend(lingerBackend);

if (import.meta.main) {
  Deno.env.set("SCIOBENCH_SELF", new URL(import.meta.url).pathname);
  Deno.exit(await runCli(Deno.args));
}
