// A running workload's pod template against a render that now asks for another: a Job's, which
// Kubernetes does not let change, and a Sandbox's, which agent-sandbox never rolls out to a
// running pod. keepRunningTemplate must hand Crossplane exactly the fields it always applies,
// with the values that run, and say what it did not apply.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../functions/berth/model.js";
import { keepRunningTemplate } from "../../functions/berth/render/running-template.js";

const UNTIL = "until the workspace is re-created, as a Job's template cannot change";
const keepStartedTemplate = (rendered: KubeObject, running: KubeObject | undefined) => keepRunningTemplate(rendered, running, "template", UNTIL);

const job = (containers: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "workspace", namespace: "ws-a" },
  spec: { backoffLimit: 0, template: { metadata: { labels: { app: "berth" } }, spec: { restartPolicy: "Never", containers, ...extra } } },
});
const runtime = (image: string, env: { name: string; value: string }[]) => ({ name: "runtime", image, env });

describe("keepRunningTemplate, a Job", () => {
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
    expect(kept.warning).toContain(`the runtime Job keeps the pod template it runs with; not applied ${UNTIL}`);
    expect(kept.warning).toContain('spec.template.spec.containers[0].image: expected "codex:2", found "codex:1"');
    expect(kept.warning).toContain("spec.template.spec.containers[0].env: expected 2 items, found 1");
  });
});

describe("keepRunningTemplate, a Sandbox", () => {
  const sandbox = (image: string, operatingMode = "Running"): KubeObject => ({
    apiVersion: "agents.x-k8s.io/v1beta1",
    kind: "Sandbox",
    metadata: { name: "workspace", namespace: "ws-a" },
    spec: { operatingMode, podTemplate: { metadata: { labels: { app: "berth" } }, spec: { containers: [runtime(image, [])] } } },
  });

  it("keeps the running template under spec.podTemplate, and says it applies at the next resume", () => {
    const kept = keepRunningTemplate(sandbox("codex:2"), sandbox("codex:1"), "podTemplate", "until the workspace next resumes");
    expect(kept.workload).toEqual(sandbox("codex:1"));
    expect(kept.warning).toBe(
      'the runtime Sandbox keeps the pod template it runs with; not applied until the workspace next resumes (expected: what the profile and document now ask for, found: what runs): spec.podTemplate.spec.containers[0].image: expected "codex:2", found "codex:1"',
    );
  });

  it("leaves everything else the render says (the operating mode above all) as rendered", () => {
    expect(keepRunningTemplate(sandbox("codex:2", "Suspended"), sandbox("codex:1"), "podTemplate", "until the workspace next resumes").workload.spec).toMatchObject({ operatingMode: "Suspended" });
  });
});
