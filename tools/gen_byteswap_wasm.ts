/**
 * Development script: compiles tools/byteswap.wat (or the .wat file in tools/ named as its
 * argument, e.g. gsd_entries.wat for lib/framings/gsd/entries_wasm.ts) with the npm `wabt`
 * package and prints the module as base64, to paste into `WASM_BASE64` in
 * lib/bytes/byteswap.ts (or that file). Never run at run time.
 * Run it without the lockfile, so `wabt` never enters deno.lock (Deno fetches every npm package
 * the lockfile lists on a first run, and users should not download a development tool):
 *
 *     deno run --no-lock --allow-read tools/gen_byteswap_wasm.ts [gsd_entries.wat]
 * @module
 */
import wabtInit from "npm:wabt@1.0.39";

const wabt = await wabtInit();
const file = Deno.args[0] ?? "byteswap.wat";
const source = Deno.readTextFileSync(new URL(`./${file}`, import.meta.url));
const mod = wabt.parseWat(file, source, { simd: true });
mod.validate();
const { buffer } = mod.toBinary({});
mod.destroy();
let text = "";
for (const b of buffer) text += String.fromCharCode(b);
console.log(`// ${buffer.length} bytes`);
console.log(btoa(text));
