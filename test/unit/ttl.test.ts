// The response TTL: how long Crossplane waits before composing a workspace again when nothing
// it watches has changed. Short while a workspace moves, long once it has settled, both
// configurable, and a bad setting refused by name.
import { describe, expect, it } from "vitest";
import type { Verdict } from "../../functions/berth/model.js";
import { DEFAULT_TTLS, parseDuration, responseTTL, TTL_ENV, ttlsFromEnvironment } from "../../functions/berth/ttl.js";

const rendered = (phase?: string): Verdict => ({ type: "rendered", requirements: {}, resources: {}, status: phase === undefined ? {} : { phase }, warnings: [] });
const TTLS = { provisioning: 7, atRest: 700 };

describe("responseTTL", () => {
  it.each([
    ["Pending", 7],
    ["Provisioning", 7],
    ["Suspending", 7],
    ["Resuming", 7],
    ["Deleting", 7],
    ["Ready", 700],
    ["Suspended", 700],
    ["Failed", 700],
  ])("phase %s: %i s", (phase, seconds) => {
    expect(responseTTL(rendered(phase), TTLS)).toBe(seconds);
  });

  it("a document without a phase is at rest", () => {
    expect(responseTTL(rendered(), TTLS)).toBe(700);
  });

  it("a fatal answer asks to be called again soon (Crossplane also backs off on its error)", () => {
    expect(responseTTL({ type: "fatal", requirements: {}, message: "x" }, TTLS)).toBe(7);
  });

  it("the defaults: Crossplane's minute while moving, a quarter of an hour at rest", () => {
    expect(DEFAULT_TTLS).toEqual({ provisioning: 60, atRest: 900 });
  });
});

describe("parseDuration", () => {
  it.each([
    ["1s", 1],
    ["90s", 90],
    ["15m", 900],
    ["1h", 3600],
    ["1h30m", 5400],
    ["24h", 86400],
  ])("%s is %i s", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(["", "0s", "15", "15 m", "1d", "-5m", "25h", "1.5h", "m", "5mx"])("%j is refused", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("ttlsFromEnvironment", () => {
  it("unset or empty variables keep the defaults", () => {
    expect(ttlsFromEnvironment({})).toEqual(DEFAULT_TTLS);
    expect(ttlsFromEnvironment({ [TTL_ENV.atRest]: "" })).toEqual(DEFAULT_TTLS);
  });

  it("each variable sets its own TTL", () => {
    expect(ttlsFromEnvironment({ BERTH_TTL_PROVISIONING: "20s" })).toEqual({ provisioning: 20, atRest: 900 });
    expect(ttlsFromEnvironment({ BERTH_TTL_AT_REST: "1h" })).toEqual({ provisioning: 60, atRest: 3600 });
  });

  it("a bad value is an error naming the variable and the value", () => {
    expect(() => ttlsFromEnvironment({ BERTH_TTL_AT_REST: "forever" })).toThrow('BERTH_TTL_AT_REST="forever": want a duration between 1s and 24h');
    expect(() => ttlsFromEnvironment({ BERTH_TTL_PROVISIONING: "0s" })).toThrow('BERTH_TTL_PROVISIONING="0s"');
  });
});
