import { describe, expect, it } from "vitest";
import { quantity, quantityValue } from "../../functions/berth/schema/quantity.js";

describe("quantities", () => {
  it.each([
    ["500m", 0.5],
    ["2", 2],
    ["1.5", 1.5],
    ["1k", 1000],
    ["1Ki", 1024],
    ["8Gi", 8 * 2 ** 30],
    ["20G", 20e9],
  ])("%s is %d", (q, v) => expect(quantityValue(q)).toBe(v));

  it("hands integers on as strings, whichever the author wrote", () => {
    expect(quantity.parse(2)).toBe("2");
    expect(quantity.parse("2")).toBe("2");
  });

  it.each(["", "1e3", "1.", "-1", "1 Gi", "1gi", "0x10", "Infinity"])("refuses %j", (q) => expect(quantity.safeParse(q).success).toBe(false));
});
