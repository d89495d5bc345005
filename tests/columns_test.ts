import assert from "node:assert/strict";
import { NumberColumn } from "../lib/framings/columns.ts";

Deno.test("number columns: push across blocks, set, trim and push again keep every entry", () => {
  for (const kind of ["float64", "int32"] as const) {
    const c = new NumberColumn(kind);
    const n = 3 * 4096 + 5;
    const value = (i: number) => (kind === "int32" ? i * 7 - 20_000 : i * 1e6 + 0.5);
    for (let i = 0; i < n; i++) c.push(value(i));
    assert.equal(c.length, n);
    for (const i of [0, 4095, 4096, 8191, 8192, n - 1]) assert.equal(c.at(i), value(i), `${i}`);
    c.set(4096, -3);
    assert.equal(c.at(4096), -3);
    c.trim();
    for (let i = n; i < n + 5000; i++) c.push(value(i));
    c.trim();
    assert.equal(c.length, n + 5000);
    for (let i = 0; i < n + 5000; i++) {
      if (c.at(i) !== (i === 4096 ? -3 : value(i))) assert.fail(`entry ${i}: ${c.at(i)}`);
    }
  }
});
