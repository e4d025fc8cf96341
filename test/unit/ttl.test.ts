// The response TTL: how long Crossplane waits before composing a workspace again when nothing
// it watches has changed. Short while a workspace moves, long once it has settled, shorter still
// while Crossplane's watch circuit breaker drops the XR's events, all configurable, and a bad
// setting refused by name.
import { describe, expect, it } from "vitest";
import type { Verdict } from "../../functions/berth/model.js";
import { DEFAULT_TTLS, parseDuration, responseTTL, TTL_ENV, ttlsFromEnvironment } from "../../functions/berth/respond/ttl.js";

const rendered = (phase?: string): Verdict => ({ type: "rendered", requirements: {}, resources: {}, status: phase === undefined ? {} : { phase }, warnings: [] });
const TTLS = { provisioning: 7, atRest: 700, watchCircuitOpen: 3 };
/** An XR as Crossplane hands it to the function, its watch circuit breaker open or closed. */
const xr = (open: boolean) => ({
  apiVersion: "workspaces.berth.dev/v1alpha1",
  kind: "ExecutionWorkspace",
  metadata: { name: "w" },
  status: {
    conditions: [
      open
        ? { type: "Responsive", status: "False", reason: "WatchCircuitOpen", message: "Too many watch events from Sandbox/workspace (ws-w). Allowing events periodically." }
        : { type: "Responsive", status: "True", reason: "WatchCircuitClosed" },
    ],
  },
});

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

  it("the defaults: Crossplane's minute while moving, a quarter of an hour at rest, 5 s while the breaker holds the XR", () => {
    expect(DEFAULT_TTLS).toEqual({ provisioning: 60, atRest: 900, watchCircuitOpen: 5 });
  });

  it.each([
    ["Resuming", 3],
    ["Ready", 3],
    ["Suspended", 3],
  ])("while Crossplane's watch circuit breaker holds the XR, phase %s: %i s (the requeue stands in for the events it drops)", (phase, seconds) => {
    expect(responseTTL(rendered(phase), TTLS, xr(true))).toBe(seconds);
    expect(responseTTL({ type: "fatal", requirements: {}, message: "x" }, TTLS, xr(true))).toBe(seconds);
  });

  it("a closed breaker, or none reported, changes nothing", () => {
    expect(responseTTL(rendered("Ready"), TTLS, xr(false))).toBe(700);
    expect(responseTTL(rendered("Resuming"), TTLS, xr(false))).toBe(7);
  });

  it("never lengthens a TTL that is already shorter", () => {
    expect(responseTTL(rendered("Resuming"), { ...TTLS, provisioning: 2 }, xr(true))).toBe(2);
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
    expect(ttlsFromEnvironment({ BERTH_TTL_PROVISIONING: "20s" })).toEqual({ ...DEFAULT_TTLS, provisioning: 20 });
    expect(ttlsFromEnvironment({ BERTH_TTL_AT_REST: "1h" })).toEqual({ ...DEFAULT_TTLS, atRest: 3600 });
    expect(ttlsFromEnvironment({ BERTH_TTL_WATCH_CIRCUIT_OPEN: "15s" })).toEqual({ ...DEFAULT_TTLS, watchCircuitOpen: 15 });
  });

  it("a bad value is an error naming the variable and the value", () => {
    expect(() => ttlsFromEnvironment({ BERTH_TTL_AT_REST: "forever" })).toThrow('BERTH_TTL_AT_REST="forever": want a duration between 1s and 24h');
    expect(() => ttlsFromEnvironment({ BERTH_TTL_PROVISIONING: "0s" })).toThrow('BERTH_TTL_PROVISIONING="0s"');
  });
});
