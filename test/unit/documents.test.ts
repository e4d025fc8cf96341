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
