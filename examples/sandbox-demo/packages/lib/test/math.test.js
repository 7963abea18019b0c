import assert from "node:assert/strict";
import { test } from "node:test";

import { add, mean } from "../src/index.js";

test("add", () => {
  assert.equal(add(2, 3), 5);
});

test("mean", () => {
  assert.equal(mean([1, 2, 3, 6]), 3);
  assert.throws(() => mean([]), RangeError);
});
