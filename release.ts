#!/usr/bin/env -S deno run --allow-all
/**
 * The entry of the bundle (`deno task bundle`) and of the executable (`deno task compile`): main.ts
 * plus the charting packages, which main.ts loads only when a chart is drawn (by a computed
 * specifier, so `deno run main.ts` fetches them then); here a literal dynamic import makes the
 * bundler and the compiler carry them, still evaluated only when a chart is drawn.
 * @module
 */
import { provideChartEngine } from "./lib/report/chart_engine.ts";
import { runCli } from "./lib/cli/main.ts";

provideChartEngine(() => import("./lib/report/vega_modules.ts"));

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
