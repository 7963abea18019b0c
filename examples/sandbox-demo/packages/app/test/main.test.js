import assert from "node:assert/strict";
import { test } from "node:test";

import { report } from "../src/main.js";

test("report", () => {
  assert.equal(report([10, 20, 45]), "3 requests, mean 25.0 ms");
});
