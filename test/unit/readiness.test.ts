import { describe, expect, it } from "vitest";
import { isReady, withReadiness } from "../../functions/berth/observe/readiness.js";

const o = (kind: string, status?: object) => ({ apiVersion: "v1", kind, metadata: { name: "x" }, ...(status ? { status } : {}) });

describe("readiness of composed resources", () => {
  it("nothing observed is never ready", () => expect(isReady(undefined)).toBe(false));

  it.each(["ServiceAccount", "NetworkPolicy", "ResourceQuota", "LimitRange", "Role", "RoleBinding"])("%s has no health status: ready once it exists", (kind) =>
    expect(isReady(o(kind))).toBe(true),
  );

  it.each([
    ["Namespace", { phase: "Active" }, true],
    ["Namespace", { phase: "Terminating" }, false],
    ["Namespace", undefined, false],
    ["PersistentVolumeClaim", { phase: "Bound" }, true],
    ["PersistentVolumeClaim", { phase: "Pending" }, false],
    ["Job", { active: 1, ready: 1 }, true],
    ["Job", { active: 1, ready: 0 }, false],
    ["Job", { succeeded: 1 }, true],
    ["Job", { failed: 1 }, false],
  ] as const)("%s with status %j: ready %s", (kind, status, ready) => expect(isReady(o(kind, status))).toBe(ready));
});

describe("readiness in the response that creates an object (nothing observed under its name yet)", () => {
  // Crossplane applies what the response holds in the same reconcile, or fails it: a kind with
  // no health status is ready then, and saying otherwise costs an Event and an XR write.
  it.each(["ServiceAccount", "NetworkPolicy", "ResourceQuota", "LimitRange", "Role", "RoleBinding", "ConfigMap"])("%s, with no health status: ready", (kind) =>
    expect(withReadiness({ it: o(kind) }, {}).it!.ready).toBe(true),
  );

  it.each(["Namespace", "PersistentVolumeClaim", "Job", "Sandbox", "VolumeSnapshot", "WorkerPool", "ActorTemplate"])("%s, with a health status: not ready until observed healthy", (kind) =>
    expect(withReadiness({ it: o(kind) }, {}).it!.ready).toBe(false),
  );

  it("once observed, an object is judged by what was observed, not by what is desired", () => {
    expect(withReadiness({ it: o("Namespace") }, { it: o("Namespace", { phase: "Active" }) }).it!.ready).toBe(true);
    expect(withReadiness({ it: o("PersistentVolumeClaim") }, { it: o("PersistentVolumeClaim", { phase: "Pending" }) }).it!.ready).toBe(false);
  });
});

describe("a Sandbox is ready only by a Ready written for its current spec", () => {
  const sandbox = (generation: number, ready: { status: string; observedGeneration?: number }) => ({
    apiVersion: "agents.x-k8s.io/v1beta1",
    kind: "Sandbox",
    metadata: { name: "workspace", generation },
    status: { conditions: [{ type: "Ready", reason: "DependenciesReady", ...ready }] },
  });
  it.each([
    ["Ready True for generation 3", sandbox(3, { status: "True", observedGeneration: 3 }), true],
    ["Ready True, written for generation 2 (before the spec changed)", sandbox(3, { status: "True", observedGeneration: 2 }), false],
    ["Ready True with no observedGeneration (cannot be shown current)", sandbox(3, { status: "True" }), false],
    ["Ready False for generation 3", sandbox(3, { status: "False", observedGeneration: 3 }), false],
  ] as const)("%s: ready %s", (_, o, ready) => expect(isReady(o)).toBe(ready));
});
