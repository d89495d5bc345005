/**
 * Vega-Lite and Vega, the charting packages, imported statically. Nothing imports this module by
 * a literal specifier inside lib/: lib/report/chart_engine.ts loads it by a computed one, so
 * `deno run` fetches the packages only when a chart is drawn; the release entry (release.ts)
 * imports it by a literal dynamic import so `deno bundle` and `deno compile` carry it.
 * @module
 */
export * as vegaLite from "npm:vega-lite@6.5.0";
export * as vega from "npm:vega@6.4.0";
