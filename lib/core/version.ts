/**
 * The sciobench version: the one in deno.json, printed by `--version` and stored in every JSON
 * document and in GSD headers written by sciobench.
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };

/** The sciobench version (deno.json's `version`). */
export const VERSION: string = denoJson.version;

/**
 * The git commit of a release build (stamped by .github/workflows/release.yml before
 * `deno compile`); "" in a checkout, where the commit is read from .git instead.
 */
export const COMMIT = "";
