/**
 * Declared backend options: the one validator (`--option KEY=VALUE` parsed by type, unknown keys
 * and bad values refused with the backend's options and the nearest name), the did-you-mean
 * helper, and the CLI's listing (`framings`, `--format json`, `--help`).
 */
import assert from "node:assert/strict";
import { UsageError } from "../lib/core/errors.ts";
import { backendByName } from "../lib/backends/registry.ts";
import { checkOptions, parseOptionArgs } from "../lib/framings/options.ts";
import { f77 } from "../lib/framings/f77/mod.ts";
import { netcdf } from "../lib/framings/netcdf/mod.ts";
import { didYouMean, editDistance, suggest } from "../lib/core/suggest.ts";
import { peerUsable, runCli, tempDir } from "./_helpers.ts";

Deno.test("suggest: the nearest known name, or none when nothing is close", () => {
  assert.equal(editDistance("markr", "marker"), 1);
  assert.equal(editDistance("mraker", "marker"), 1, "an adjacent swap is one edit");
  assert.equal(suggest("markr", ["marker", "names", "dtype"]), "marker");
  assert.equal(suggest("MARKER", ["marker"]), "marker");
  assert.equal(suggest("subrecord", ["marker", "subrecordLimit"]), "subrecordLimit");
  assert.equal(suggest("zzzz", ["marker", "names"]), undefined);
  assert.equal(didYouMean("gds", ["gsd", "raw"]), "; did you mean 'gsd'?");
  assert.equal(didYouMean("qqq", ["gsd", "raw"]), "");
});

Deno.test("options: values are parsed by their declared type", () => {
  const v = parseOptionArgs([f77], ["marker=8", "dtype=float32:3,float32:4"], "read").get("f77")!;
  assert.deepEqual(v, { marker: 8, dtype: ["float32:3", "float32:4"] });
  const w = parseOptionArgs([f77], ["subrecordLimit=40"], "write").get("f77")!;
  assert.deepEqual(w, { subrecordLimit: 40 });
  const n = parseOptionArgs([netcdf], ["fill=true", "numrecs=frame", "variant=5"], "write");
  assert.deepEqual(n.get("netcdf"), { fill: true, numrecs: "frame", variant: 5 });
});

Deno.test("options: unknown keys, bad values and unused options are usage errors", () => {
  const refused = (items: string[], pattern: RegExp, workload: "write" | "read" = "write") =>
    assert.throws(() => parseOptionArgs([f77], items, workload), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.exitCode, 2);
      assert.match(e.message, pattern);
      return true;
    });
  refused(
    ["markr=8"],
    /unknown option 'markr' for f77; did you mean 'marker'\?.*marker, subrecordLimit/,
  );
  refused(["marker=5"], /bad value '5' for option marker of f77: expected one of 4, 8/);
  refused(["marker=four"], /bad value 'four' for option marker/);
  refused(["subrecordLimit=0"], /expected an integer from 8/);
  refused(["subrecordLimit=1"], /bad value '1' for option subrecordLimit of f77: .* from 8/);
  refused(
    ["names="],
    /bad value '' for option names of f77: expected a comma-separated list of non-empty items/,
    "read",
  );
  refused(["names=a,,b"], /bad value 'a,,b' for option names of f77/, "read");
  refused(["dtype=float64,"], /bad value 'float64,' for option dtype of f77/, "read");
  refused(["marker"], /expected KEY=VALUE/);
  refused(["dtype=float32"], /option dtype of f77 is not used by write \(only by read, info\)/);
  assert.throws(
    () => parseOptionArgs([netcdf], ["fill=yes"], "write"),
    /bad value 'yes' for option fill of netcdf: expected true or false/,
  );
  assert.throws(
    () => parseOptionArgs([netcdf], ["chunks=x"], "write"),
    /set through the library API/,
  );
  // Several backends in one run: a key needs one backend that declares it, and goes only there.
  const both = parseOptionArgs([netcdf, backendByName("raw")], ["variant=2"], "records");
  assert.deepEqual(both.get("netcdf"), { variant: 2 });
  assert.deepEqual(both.get("raw"), {});
  assert.throws(
    () => parseOptionArgs([netcdf, backendByName("raw")], ["marker=8"], "records"),
    /unknown option 'marker' for netcdf, raw .*raw has no options/,
  );
});

Deno.test("options: the library API is checked against the same declarations", () => {
  using tmp = tempDir();
  const raw = backendByName("raw");
  assert.throws(
    () => raw.openWriter(`${tmp.path}/a.raw`, { create: "new", backendOptions: { marker: 8 } }),
    /unknown option 'marker' for raw/,
  );
  assert.throws(() => checkOptions(f77, { marker: "8" }), /bad value '8' for option marker/);
  checkOptions(f77, { marker: 8, endian: "big", layout: [] });
  assert.throws(
    () =>
      backendByName("hdf5").openWriter(`${tmp.path}/a.h5`, {
        create: "new",
        backendOptions: { marker: 8 },
      }),
    /unknown option 'marker' for hdf5 \(hdf5 has no options\)/,
  );
  assert.deepEqual([...Deno.readDirSync(tmp.path)], [], "nothing was created");
});

Deno.test("options cli: a typo or an option the backend lacks exits 2 and writes nothing", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/t.f77`;
  const typo = await runCli(
    ["write", "--framing", "f77", "--option", "markr=8", "--n", "4", "--frames", "2", path],
  );
  assert.equal(typo.code, 2);
  assert.match(
    typo.stderr,
    /^sciobench: error: unknown option 'markr' for f77; did you mean 'marker'\?/,
  );
  const h5 = await runCli(
    ["write", "--framing", "hdf5", "--option", "marker=8", "--n", "4", "--frames", "2", path],
  );
  assert.equal(h5.code, 2);
  assert.match(h5.stderr, /unknown option 'marker' for hdf5/);
  assert.deepEqual([...Deno.readDirSync(tmp.path)], []);
  const ok = await runCli(
    ["write", "--framing", "f77", "--option", "marker=8", "--n", "4", "--frames", "2", path],
  );
  assert.equal(ok.code, 0, ok.stderr);
  const info = await runCli(["info", path, "--option", "names=a,b", "--option", "nmes=x"]);
  assert.equal(info.code, 2);
  assert.match(info.stderr, /unknown option 'nmes' for f77; did you mean 'names'\?/);
});

Deno.test("options cli: framings lists every backend's options; --format json as data; --help", async () => {
  const text = await runCli(["framings"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^f77 .*\n {2}--option marker=4\|8 +record marker bytes/m);
  assert.match(text.stdout, /--option variant=1\|2\|5 .*used by readers, records, write/);
  const json = await runCli(["framings", "--format", "json"]);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as {
    backends: { name: string; kind: string; options: Record<string, unknown>[] }[];
  };
  const names = doc.backends.map((b) => b.name);
  for (
    const n of ["gsd", "raw", "ieeeio", "netcdf", "f77", "hdf5", "netcdf4", "netcdf-lib", "hdf4"]
  ) {
    assert.ok(names.includes(n), n);
  }
  const marker = doc.backends.find((b) => b.name === "f77")!.options.find((o) =>
    o.name === "marker"
  )!;
  assert.deepEqual(marker.type, "integer");
  assert.deepEqual(marker.choices, [4, 8]);
  assert.equal(typeof marker.help, "string");
  const variant = doc.backends.find((b) => b.name === "netcdf-lib")!.options[0]!;
  assert.deepEqual([variant.name, variant.default], ["variant", 1]);
  const help = await runCli(["write", "--help"]);
  assert.match(help.stdout, /Backend options \(--option KEY=VALUE\):/);
  assert.match(help.stdout, / {4}marker=4\|8 +record marker bytes/);
  assert.doesNotMatch(help.stdout, /dtype=/, "write --help lists only the options write uses");
  const bad = await runCli(["framings", "--format", "xml"]);
  assert.equal(bad.code, 2);
});

Deno.test("options: netcdf and netcdf4 refuse a recordDim that is no netCDF name, in one line", async () => {
  using tmp = tempDir();
  const path = `${tmp.path}/t.nc`;
  const cases: [string, RegExp][] = [
    ["", /a netCDF name cannot be empty/],
    ["a/b", /holds no '\/'/],
    ["a".repeat(300), /at most 256 bytes \(NC_MAX_NAME\), this one 300/],
    [" x", /starts with a letter, a digit or '_'/],
    ["x ", /does not end in white space/],
  ];
  const framings = ["netcdf", "netcdf-lib", "netcdf4"].filter((f) =>
    peerUsable(f, backendByName(f).unavailable())
  );
  for (const framing of framings) {
    for (const [value, problem] of cases) {
      const r = await runCli([
        ...["write", "--framing", framing, "--option", `recordDim=${value}`],
        ...["--n", "4", "--frames", "2", path],
      ]);
      assert.equal(r.code, 2, `${framing} recordDim='${value}': ${r.stderr}`);
      assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`^sciobench: error: bad value '.*' for option recordDim of ${framing}: `),
      );
      assert.match(r.stderr, problem);
      assert.deepEqual([...Deno.readDirSync(tmp.path)], [], "nothing written");
    }
    // the library API is held to the same rule
    assert.throws(
      () => checkOptions(backendByName(framing), { recordDim: "" }),
      (e) => e instanceof UsageError && /cannot be empty/.test(e.message),
    );
    // the longest name libnetcdf takes (256 bytes of UTF-8) is written, and passes --strict
    const longest = `é${"a".repeat(254)}`;
    const ok = await runCli([
      ...["write", "--framing", framing, "--option", `recordDim=${longest}`],
      ...["--n", "4", "--frames", "2", path],
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const strict = await runCli(["info", "--strict", "--format", "json", path]);
    assert.equal(strict.code, 0, strict.stderr);
    Deno.removeSync(path);
  }
});
