/**
 * Loads the charting packages (lib/report/vega_modules.ts) on the first chart drawn, never at
 * startup: Deno fetches a module's literal imports, dynamic ones included, before it runs, so the
 * module is imported by a computed specifier, which Deno neither prefetches nor bundles. An entry
 * that must carry the packages (release.ts: the bundle and the executable) provides its own
 * loader with {@link provideChartEngine}.
 * @module
 */

/** The charting packages: Vega-Lite (compiles a chart) and Vega (renders it to SVG). */
export type ChartEngine = typeof import("./vega_modules.ts");

let provided: (() => Promise<ChartEngine>) | undefined;

/** Makes {@link loadChartEngine} use `load` (an entry's literal import of vega_modules.ts). */
export function provideChartEngine(load: () => Promise<ChartEngine>): void {
  provided = load;
}

/** The module whose packages draw charts, named at run time so that nothing prefetches it. */
function engineSpecifier(): string {
  return new URL(["vega", "modules.ts"].join("_"), import.meta.url).href;
}

/** The charting packages, loaded (and on first use fetched) now. */
export async function loadChartEngine(): Promise<ChartEngine> {
  if (provided !== undefined) return await provided();
  return await import(engineSpecifier()) as ChartEngine;
}
