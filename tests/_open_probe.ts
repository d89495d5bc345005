/**
 * Opens a table file (tests/open_syscalls_test.ts runs this under strace): `_open_probe.ts
 * FRAMING PATH N` opens PATH with FRAMING and the table's layout at N particles a frame twice,
 * untimed (its code compiled, the file cached), then once between the lines `=====OPEN` and
 * `=====DONE` on stderr (the trace's markers), and prints the frames found.
 * @module
 */
import { backendByName } from "../lib/backends/registry.ts";
import { TableFrames } from "../lib/workloads/table/mod.ts";

const [framing, path, n] = Deno.args;
const backend = backendByName(framing!);
const layout = new TableFrames(Number(n), 1).layout;
for (let k = 0; k < 2; k++) backend.openReader(path!, { layout }).close();
const encoder = new TextEncoder();
Deno.stderr.writeSync(encoder.encode("=====OPEN\n"));
const source = backend.openReader(path!, { layout });
Deno.stderr.writeSync(encoder.encode("=====DONE\n"));
source.close();
console.log(source.frameCount);
