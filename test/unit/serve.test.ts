// The largest request the function accepts: 64 MiB unless BERTH_MAX_REQUEST_SIZE says otherwise.
// test/grpc sends requests on either side of the bound to the running process.
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_ENV, maxRequestBytesFromEnvironment } from "../../functions/berth/serve.js";

describe("maxRequestBytesFromEnvironment", () => {
  it("is 64 MiB unless set", () => {
    expect(DEFAULT_MAX_REQUEST_BYTES).toBe(67_108_864);
    expect(maxRequestBytesFromEnvironment({})).toBe(DEFAULT_MAX_REQUEST_BYTES);
    expect(maxRequestBytesFromEnvironment({ [MAX_REQUEST_ENV]: "" })).toBe(DEFAULT_MAX_REQUEST_BYTES);
  });

  it.each([
    ["4Mi", 4 * 2 ** 20],
    ["256Mi", 256 * 2 ** 20],
    ["1Gi", 2 ** 30],
    ["8192Ki", 8 * 2 ** 20],
    ["10000000", 10_000_000],
  ])("reads %s", (text, bytes) => {
    expect(maxRequestBytesFromEnvironment({ BERTH_MAX_REQUEST_SIZE: text })).toBe(bytes);
  });

  it.each(["3Mi", "2Gi", "64MB", "64M", "1.5Gi", "lots", "-64Mi"])("refuses %s, naming the variable", (text) => {
    expect(() => maxRequestBytesFromEnvironment({ BERTH_MAX_REQUEST_SIZE: text })).toThrow(`BERTH_MAX_REQUEST_SIZE=${JSON.stringify(text)}: want a size between 4Mi and 1Gi`);
  });
});
