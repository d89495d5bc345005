/** The sciobench version, printed by `--version` and stored in every JSON document. */
export const VERSION = "0.1.0";
