/**
 * The column schema (lib/workloads/columns.ts): every workload's columns come from it with one
 * unit, kind and meaning per name; a phase's columns carry its name; flag columns are JSON
 * booleans (CSV: true, false); docs/columns.md is what tools/columns_doc.ts generates.
 */
import assert from "node:assert/strict";
import {
  COLUMN_SCHEMA,
  columnDoc,
  flagsAsBooleans,
  INFO_COLUMN_NAMES,
  isColumnName,
  MPI_IO_COLUMN_NAMES,
  READ_COLUMN_NAMES,
  WRITE_COLUMN_NAMES,
} from "../lib/workloads/columns.ts";
import { TABLE_COLUMN_DOCS, TABLE_FIO_COLUMN_DOCS } from "../lib/workloads/table/mod.ts";
import { SCALING_COLUMN_DOCS } from "../lib/workloads/scaling/mod.ts";
import { RECORDS_COLUMN_DOCS } from "../lib/workloads/records/mod.ts";
import { READERS_COLUMN_DOCS } from "../lib/workloads/readers/mod.ts";
import { LOADER_COLUMN_DOCS } from "../lib/workloads/loader/columns.ts";
import { TRANSFER_COLUMN_DOCS, transferColumns } from "../lib/workloads/transfer.ts";
import { openRowSink } from "../lib/report/output.ts";
import {
  COLUMNS_DOC_COMMAND,
  COLUMNS_DOC_PATH,
  formattedColumnsMarkdown,
} from "../tools/columns_doc.ts";
import { tempDir } from "./_helpers.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const WORKLOADS = {
  table: [...TABLE_COLUMN_DOCS, ...TABLE_FIO_COLUMN_DOCS],
  scaling: SCALING_COLUMN_DOCS,
  records: RECORDS_COLUMN_DOCS,
  readers: READERS_COLUMN_DOCS,
  read: READ_COLUMN_NAMES.map(columnDoc),
  write: WRITE_COLUMN_NAMES.map(columnDoc),
  info: INFO_COLUMN_NAMES.map(columnDoc),
  loader: LOADER_COLUMN_DOCS,
};

Deno.test("schema: docs/columns.md is generated from the schema (no drift)", async () => {
  const file = Deno.readTextFileSync(`${ROOT}${COLUMNS_DOC_PATH}`);
  assert.ok(
    file === await formattedColumnsMarkdown(),
    `${COLUMNS_DOC_PATH} differs from the column schema; regenerate it: ${COLUMNS_DOC_COMMAND}`,
  );
  for (const name of Object.keys(COLUMN_SCHEMA)) {
    assert.ok(file.includes(`- \`${name}\` (`), `${name} is in ${COLUMNS_DOC_PATH}`);
  }
});

Deno.test("schema: every workload's column is the schema's, named once, in one unit and meaning", () => {
  const seen = new Set<string>();
  for (const [workload, docs] of Object.entries(WORKLOADS)) {
    const names = docs.map((d) => d.name);
    assert.equal(new Set(names).size, names.length, `${workload}: no column twice`);
    for (const d of docs) {
      assert.ok(isColumnName(d.name), `${workload}: ${d.name} is in the schema`);
      assert.deepEqual(d, columnDoc(d.name), `${workload}: ${d.name} as the schema says`);
      seen.add(d.name);
    }
  }
  // the columns rows carry under MPI only (lib/mpi/aggregate.ts; table's and records' extras)
  const mpi = ["ranks", "rank", "host", "write_path", "read_path", ...MPI_IO_COLUMN_NAMES];
  const unused = Object.keys(COLUMN_SCHEMA).filter((n) => !seen.has(n) && !mpi.includes(n));
  assert.deepEqual(unused, [], "every column of the schema is written by some command");
});

Deno.test("schema: a phase's columns carry its name; the phase-less ones are records' and loader's alone", () => {
  // records writes one row per phase (named in `phase`), loader one per epoch; everywhere else a
  // measured column says its phase, as write_s, write_user_s, write_dev_bytes, read_dev_bytes
  const phaseless = ["cpu_s", "user_s", "sys_s", "MiBps", "dev_read_bytes", "dev_write_bytes"];
  for (const [workload, docs] of Object.entries(WORKLOADS)) {
    if (workload === "records" || workload === "loader") continue;
    const names = docs.map((d) => d.name);
    for (const name of [...phaseless, "real_s", "combined_ticks", "user_ticks", "sys_ticks"]) {
      assert.ok(!names.includes(name), `${workload} writes ${name}`);
    }
  }
  const scaling = SCALING_COLUMN_DOCS.map((d) => d.name);
  for (const name of ["write_s", "write_MiBps", "write_user_s", "write_sys_s", "write_dev_bytes"]) {
    assert.ok(scaling.includes(name), `scaling writes ${name}`);
  }
  const write = WRITE_COLUMN_NAMES as readonly string[];
  for (const name of ["write_user_s", "write_sys_s", "write_dev_bytes"]) {
    assert.ok(write.includes(name), `write writes ${name}`);
  }
  const readers = READERS_COLUMN_DOCS.map((d) => d.name);
  for (const name of ["read_user_s", "read_sys_s", "read_dev_bytes"]) {
    assert.ok(readers.includes(name), `readers writes ${name}`);
  }
});

Deno.test("schema: flag columns are JSON booleans and CSV's true and false", () => {
  for (const d of TRANSFER_COLUMN_DOCS.filter((d) => d.name !== "bs_bytes")) {
    assert.equal(d.kind, "flag", d.name);
  }
  assert.deepEqual(transferColumns(undefined), { bs_bytes: 0, direct: false, huge_pages: false });
  assert.deepEqual(
    transferColumns({ bs: 4096, direct: true }),
    { bs_bytes: 4096, direct: true, huge_pages: true },
  );
  assert.deepEqual(
    flagsAsBooleans({ direct: "false", huge_pages: "true", framing: "true", cold_ok: "" }),
    { direct: false, huge_pages: true, framing: "true", cold_ok: "" },
  );
  using d = tempDir();
  const row = { framing: "raw", ...transferColumns({ bs: 0, direct: true, hugePages: false }) };
  const columns = Object.keys(row);
  for (const format of ["json", "jsonl", "csv"] as const) {
    const out = `${d.path}/rows.${format}`;
    const sink = openRowSink(columns, { format, out, meta: { command: "test", direct: true } });
    sink.add(row);
    sink.close();
    const text = Deno.readTextFileSync(out);
    if (format === "csv") {
      assert.equal(text, "framing,bs_bytes,direct,huge_pages\nraw,0,true,false\n");
    } else {
      const doc = format === "json"
        ? JSON.parse(text)
        : { ...JSON.parse(text.split("\n")[0]!), rows: [JSON.parse(text.split("\n")[1]!)] };
      assert.deepEqual(doc.rows[0], {
        framing: "raw",
        bs_bytes: 0,
        direct: true,
        huge_pages: false,
      });
      assert.equal(doc.meta.direct, true, `${format}: meta keeps booleans`);
    }
  }
});
