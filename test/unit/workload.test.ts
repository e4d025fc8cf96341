// A running Job's pod template, which Kubernetes does not let change, against a render that
// now asks for another: keepStartedTemplate must hand Crossplane exactly the fields it always
// applies, with the values that run, and say what it did not apply.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../functions/berth/model.js";
import { keepStartedTemplate } from "../../functions/berth/render/workload.js";

const job = (containers: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "workspace", namespace: "ws-a" },
  spec: { backoffLimit: 0, template: { metadata: { labels: { app: "berth" } }, spec: { restartPolicy: "Never", containers, ...extra } } },
});
const runtime = (image: string, env: { name: string; value: string }[]) => ({ name: "runtime", image, env });

describe("keepStartedTemplate", () => {
  it("applies the render as it is when the running template already matches it, defaults aside", () => {
    const rendered = job([runtime("codex:1", [{ name: "A", value: "1" }])]);
    const running = job([{ ...runtime("codex:1", [{ name: "A", value: "1" }]), terminationMessagePath: "/dev/termination-log" }], { dnsPolicy: "ClusterFirst" });
    expect(keepStartedTemplate(rendered, running)).toEqual({ workload: rendered });
  });

  it("applies the render as it is when no Job runs yet", () => {
    const rendered = job([runtime("codex:2", [])]);
    expect(keepStartedTemplate(rendered, undefined)).toEqual({ workload: rendered });
  });

  it("keeps what runs (a new image, an added variable) in the render's own fields only, and warns naming each change", () => {
    const rendered = job([runtime("codex:2", [{ name: "A", value: "1" }, { name: "NEW", value: "x" }])]);
    const running = job([{ ...runtime("codex:1", [{ name: "A", value: "1" }]), terminationMessagePath: "/dev/termination-log" }], { dnsPolicy: "ClusterFirst" });
    const kept = keepStartedTemplate(rendered, running);
    // The started image and variables, none of the API server's defaults (Crossplane never applied them).
    expect(kept.workload).toEqual(job([runtime("codex:1", [{ name: "A", value: "1" }])]));
    expect(kept.warning).toContain("the runtime Job keeps the pod template it started with");
    expect(kept.warning).toContain('spec.template.spec.containers[0].image: expected "codex:2", found "codex:1"');
    expect(kept.warning).toContain("spec.template.spec.containers[0].env: expected 2 items, found 1");
  });
});
