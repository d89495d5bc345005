/**
 * `sciobench framings`: every backend (native framings and peers), whether it can run here and
 * why not, and the options each declares (`--format json` for all of it as data).
 * @module
 */
import { BACKENDS } from "../backends/registry.ts";
import { writeStdout } from "../report/output.ts";
import { parseChoice } from "../core/values.ts";
import { parseFlags } from "./parse_flags.ts";
import { framingsRowFormats } from "./flags.ts";
import { commandHelp } from "./help.ts";
import type { Command } from "./command.ts";
import { openResults } from "./output.ts";
import { optionDefaultText, optionValueText } from "../workloads/settings.ts";
import { col, type ColumnDoc } from "../report/human.ts";
import { SciobenchError } from "../core/errors.ts";

const COLUMNS: readonly ColumnDoc[] = [
  col("name", "", "text", "the name --framing takes"),
  col("kind", "", "text", "native (sciobench's own code) or peer (a C library through FFI)"),
  col("orders", "", "text", "byte orders it can write"),
  col("available", "", "text", "yes, or no with the reason"),
  col("description", "", "text", "the file format"),
];

/** The `framings` subcommand. */
export const framingsCommand: Command = {
  name: "framings",
  summary: "list every backend (native framings and peers), its options, and which run here",
  // made when asked: it lists the output formats registered by then
  get help(): string {
    return commandHelp("framings", {
      title: "list every backend: the native framings and the peers",
      usage: "[--format F]",
      intro:
        `One line per backend (native framing or peer): name, kind, byte orders, and availability (with
the reason when a peer library or program is missing), then its options (--option KEY=VALUE)
with their values, default and the commands that use them. --format json prints one document:
for each backend its name, kind, description, orders, availability and options (name, type,
default, choices, min, max, help, workloads).`,
    });
  },
  async run(args: string[]): Promise<void> {
    const { values } = parseFlags("framings", args);
    const rowFormats = framingsRowFormats();
    const format = parseChoice(
      values.format,
      ["table", "text", "json", ...rowFormats],
      "--format",
    );
    const availability = (b: (typeof BACKENDS)[number]): string | null => {
      try {
        return b.unavailable();
      } catch (e) {
        // a SCIOBENCH_*_LIB that cannot be loaded: the listing still shows every backend
        if (!(e instanceof SciobenchError)) throw e;
        return e.message;
      }
    };
    if (rowFormats.includes(format)) {
      const out = openResults({
        command: "framings",
        args,
        columns: COLUMNS,
        human: COLUMNS.map((c) => c.name),
        options: {},
      }, { format });
      for (const b of BACKENDS) {
        const why = availability(b);
        out.add({
          name: b.name,
          kind: b.kind,
          orders: b.orders.join("/"),
          available: why === null ? "yes" : `no: ${why}`,
          description: b.description,
        });
      }
      await out.finish();
      return;
    }
    if (format === "json") {
      const doc = BACKENDS.map((b) => {
        const why = availability(b);
        return {
          name: b.name,
          kind: b.kind,
          description: b.description,
          orders: b.orders,
          available: why === null,
          ...(why === null ? {} : { unavailable: why }),
          options: b.options,
        };
      });
      writeStdout(JSON.stringify({ backends: doc }, null, 2) + "\n");
      return Promise.resolve();
    }
    const lines: string[] = [];
    for (const b of BACKENDS) {
      const why = availability(b);
      lines.push(
        `${b.name.padEnd(11)} ${b.kind.padEnd(6)} ${b.orders.join("/").padEnd(10)} ${
          why === null ? "available" : `unavailable: ${why}`
        }  ${b.description}`,
      );
      for (const s of b.options.filter((o) => o.type !== "value")) {
        lines.push(
          `  --option ${`${s.name}=${optionValueText(s)}`.padEnd(26)} ${s.help}${
            optionDefaultText(s)
          }; used by ${s.workloads.join(", ")}`,
        );
      }
    }
    writeStdout(lines.join("\n") + "\n");
    return Promise.resolve();
  },
};
