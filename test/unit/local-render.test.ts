import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import { renderLocally } from "../../functions/berth/tooling/local-render.js";
import { specHash } from "../../functions/berth/hash.js";
import { ALL_REQUIRED, PERSISTENT, PROFILE, request, SERVICES, STORAGE_CLASS } from "../fixtures.js";

describe("the local render runs Crossplane's requirement loop", () => {
  it("settles within Crossplane's five calls and equals a single call with every requirement answered", async () => {
    let calls = 0;
    const { response } = await renderLocally(PERSISTENT, [PROFILE, STORAGE_CLASS, ...SERVICES], {}, async (req) => {
      calls++;
      return runFunction(req);
    });
    expect(calls).toBeLessThanOrEqual(5);
    expect({ ...response, meta: undefined }).toEqual({ ...runFunction(request(PERSISTENT, { required: ALL_REQUIRED })), meta: undefined });
  });

  it("answers a requirement with nothing when the object is not among the files", async () => {
    const { response } = await renderLocally(PERSISTENT, []);
    expect((response.desired?.composite?.resource as { status: { reason: string } }).status.reason).toBe("ProfileNotFound");
  });
});

describe("specHash", () => {
  it("ignores key order and changes with any value", () => {
    expect(specHash({ a: 1, b: { c: [1, 2] } })).toBe(specHash({ b: { c: [1, 2] }, a: 1 }));
    expect(specHash({ a: 1, b: { c: [1, 2] } })).not.toBe(specHash({ a: 1, b: { c: [2, 1] } }));
  });
});
