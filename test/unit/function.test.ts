import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { runFunction } from "../../functions/berth/function.js";
import { EXECUTION_CASES } from "../execution-cases.js";
import { CASES, expected, GOLDEN_DIR, goldenPath } from "../cases.js";

// UPDATE_GOLDEN=1 rewrites test/golden/ from the current output, to be reviewed in the diff
// before it is committed. CI never sets it, so there a golden file that differs fails.
const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === "1";

describe("RunFunction: whole request in, whole response out", () => {
  it.each([...CASES, ...EXECUTION_CASES])("$name", (c) => {
    const got = JSON.parse(JSON.stringify(runFunction(c.req)));
    if (UPDATE_GOLDEN && "golden" in c.want) {
      mkdirSync(GOLDEN_DIR, { recursive: true });
      writeFileSync(goldenPath(c.want.golden), stringify(got, { lineWidth: 0 }));
    }
    expect(got).toEqual(expected(c));
  });
});
