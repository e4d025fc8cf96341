import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import { ALL_REQUIRED, edited, PERSISTENT, request } from "../fixtures.js";

describe("documents as Crossplane hands them over", () => {
  it("spec.crossplane, which Crossplane writes into every v2 XR, is not the author's and changes nothing", () => {
    const withCrossplane = edited(PERSISTENT, (w) => {
      (w.spec as Record<string, unknown>).crossplane = { compositionRef: { name: "developerworkspaces" }, resourceRefs: [] };
    });
    expect(runFunction(request(withCrossplane, { required: ALL_REQUIRED }))).toEqual(runFunction(request(PERSISTENT, { required: ALL_REQUIRED })));
  });

  it("an unknown field anywhere else in spec is still refused", () => {
    const rsp = runFunction(request(edited(PERSISTENT, (w) => ((w.spec as Record<string, unknown>).crossplanes = {})), { required: ALL_REQUIRED }));
    expect(rsp.results.map((r) => r.message)).toEqual(['cannot render DeveloperWorkspace "alice-payments-xr": invalid document: spec: Unrecognized key: "crossplanes"']);
  });
});

describe("a workspace being deleted", () => {
  it("reports phase Deleting and keeps rendering every object, so nothing goes before the garbage collector takes it", () => {
    const deleting = edited(PERSISTENT, (w) => (w.metadata!.deletionTimestamp = "2026-11-29T10:00:00Z"));
    const rsp = runFunction(request(deleting, { required: ALL_REQUIRED }));
    const status = (rsp.desired?.composite?.resource as { status: { phase: string; reason: string } }).status;
    expect([status.phase, status.reason]).toEqual(["Deleting", "Deleting"]);
    expect(Object.keys(rsp.desired?.resources ?? {})).toEqual(Object.keys(runFunction(request(PERSISTENT, { required: ALL_REQUIRED })).desired?.resources ?? {}));
  });
});
