// Evidence exported before clean-up (lifecycle.evidence.exportBeforeCleanup): one test per rule,
// each a plain call of the function with the objects Crossplane would observe and fetch.
import { describe, expect, it } from "vitest";
import type { RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { runFunction } from "../../functions/berth/function.js";
import { asObserved } from "../../functions/berth/tooling/local-render.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { ALL_REQUIRED, edited, EW_SANDBOX, existingBoundary, PERSISTENT, PROFILE, REVIEW, request, SANDBOX_REQUIRED } from "../fixtures.js";
import { allContainers, ofKind, renderObjects, selects } from "../rendered.js";

const DIGEST = `sha256:${"ab".repeat(32)}`;
const JOB_UID = "6f1c1b5e-0000-4000-8000-000000000001";
const EXPORT_UID = "6f1c1b5e-0000-4000-8000-000000000002";

type Env = { name: string; value?: string; valueFrom?: unknown }[];
const messages = (rsp: RunFunctionResponse) => (rsp.results ?? []).map((r) => r.message).join("\n");
const statusOf = (rsp: RunFunctionResponse) => rsp.desired?.composite?.resource?.status as Record<string, any>;
const desired = (rsp: RunFunctionResponse, name: string) => rsp.desired?.resources?.[name]?.resource as KubeObject | undefined;
const jobSpec = (job: KubeObject | undefined) => (job?.spec as { ttlSecondsAfterFinished?: number; suspend?: boolean; template: { spec: IPodSpec } });
const envOf = (job: KubeObject | undefined, container: string): Env => (allContainers(jobSpec(job).template.spec).find((c) => c.name === container)?.env ?? []) as Env;

/** A review workspace (ephemeral, retention 3 days) whose boundary and running Job exist, as Crossplane observes them. */
function running(workspace: KubeObject = REVIEW, required: Record<string, KubeObject[]> = ALL_REQUIRED) {
  const boundary = existingBoundary(workspace, required);
  const first = runFunction(request(workspace, { required, observed: boundary }));
  const job = { ...desired(first, "workload")!, metadata: { ...desired(first, "workload")!.metadata, uid: JOB_UID }, status: { active: 1, ready: 1 } };
  return { workspace, observed: { ...asObserved(first), ...boundary, workload: job } as Record<string, KubeObject>, namespace: boundary.namespace!.metadata!.name! };
}

function workloadPod(namespace: string, runtime: { exitCode: number; finishedAt?: string } | undefined, collectorRunning = true): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "workspace-x7k2p", namespace, creationTimestamp: "2026-12-07T10:00:00Z", labels: { "batch.kubernetes.io/job-name": "workspace" }, ownerReferences: [{ uid: JOB_UID, controller: true }] },
    status: {
      podIP: "10.244.0.17",
      initContainerStatuses: [{ name: "checkout", state: { terminated: { exitCode: 0 } } }, { name: "evidence", state: collectorRunning ? { running: {} } : { terminated: { exitCode: 0 } } }],
      containerStatuses: [{ name: "runtime", state: runtime ? { terminated: { ...runtime, reason: runtime.exitCode === 0 ? "Completed" : "Error" } } : { running: {} } }],
    },
  };
}

function exportPod(namespace: string, name: string, exitCode: number, message: unknown, owner = EXPORT_UID, finishedAt = "2026-12-07T10:05:00Z"): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, creationTimestamp: finishedAt, labels: { "batch.kubernetes.io/job-name": "evidence-export" }, ownerReferences: [{ uid: owner, controller: true }] },
    status: { containerStatuses: [{ name: "export", state: { terminated: { exitCode, finishedAt, message: JSON.stringify(message) } } }] },
  };
}

const EXPORTED = { state: "Exported", repository: "evidence.registry.example.com/berth/evidence", tag: "review-pr-987", digest: DIGEST, exportedAt: "2026-12-07T10:05:00Z", verification: { exitCode: 1, output: "1 test failed" }, attempts: 1 };

/** The reconcile after the runtime exited, and the one after the export Job was created, with what its pods reported. */
function afterRun(runtime = { exitCode: 0, finishedAt: "2026-12-07T10:04:00Z" }) {
  const { workspace, observed, namespace } = running();
  const pods = { ...ALL_REQUIRED, "workload-pods": [workloadPod(namespace, runtime)] };
  const ended = runFunction(request(workspace, { required: pods, observed }));
  const exportJob = { ...desired(ended, "evidence-export")!, metadata: { ...desired(ended, "evidence-export")!.metadata, uid: EXPORT_UID } };
  const recorded = edited(workspace, (w) => (w.status = { outcome: statusOf(ended).outcome }));
  const next = (exportPods: KubeObject[], composite = recorded) =>
    runFunction(request(composite, { required: { ...pods, "evidence-export-pods": exportPods }, observed: { ...observed, "evidence-export": exportJob } }));
  return { ended, next, namespace, recorded };
}

describe("evidence exported before clean-up", () => {
  it("a profile without spec.evidence: refused, naming the field, nothing rendered", () => {
    const profile = edited(PROFILE, (p) => delete (p.spec as { evidence?: unknown }).evidence);
    const rsp = runFunction(request(REVIEW, { required: { ...ALL_REQUIRED, profile: [profile] } }));
    expect(rsp.desired?.resources ?? {}).toEqual({});
    expect(messages(rsp)).toContain('spec.lifecycle.evidence.exportBeforeCleanup: WorkspaceProfile "standard" has no spec.evidence');
  });

  it("a workspace that declares a capability to the evidence registry: refused, so the runtime never reaches it", () => {
    const workspace = edited(REVIEW, (w) => ((w.spec as { capabilities: { registries?: unknown[] } }).capabilities.registries = [{ destination: "evidence-registry" }]));
    const rsp = runFunction(request(workspace, { required: ALL_REQUIRED }));
    expect(rsp.desired?.resources ?? {}).toEqual({});
    expect(messages(rsp)).toContain(`spec.capabilities.registries[0].destination: "evidence-registry" is WorkspaceProfile "standard"'s evidence registry, which only the evidence export may reach`);
  });

  it("a profile whose evidence names no reviewed destination is invalid, naming the field", () => {
    const profile = edited(PROFILE, (p) => ((p.spec as { evidence: { destination: string } }).evidence.destination = "nowhere"));
    const rsp = runFunction(request(profile, { required: { "storage-class": ALL_REQUIRED["storage-class"] } }));
    expect(messages(rsp)).toContain('spec.evidence.destination: names no destination in spec.destinations ("nowhere")');
  });

  it("the runtime never reaches the registry: only the export's pods are selected by its egress, and the collector's port admits them alone", () => {
    const objects = renderObjects(PERSISTENT);
    const policies = ofKind(objects, "NetworkPolicy");
    const labels = (ofKind(objects, "Namespace")[0]!.metadata!.labels ?? {}) as Record<string, string>;
    const runtimePod = { "app.kubernetes.io/managed-by": "berth", "workspaces.berth.dev/workspace-id": labels["workspaces.berth.dev/workspace-id"] ?? "alice-payments", "batch.kubernetes.io/job-name": "workspace" };
    const exportPod = { "app.kubernetes.io/managed-by": "berth", "workspaces.berth.dev/workspace-id": "alice-payments", "workspaces.berth.dev/component": "evidence-export", "batch.kubernetes.io/job-name": "evidence-export" };
    const registryPeer = JSON.stringify([{ ipBlock: { cidr: "10.40.20.5/32" } }]);
    const reaching = (pod: Record<string, string>) => policies.filter((p) => selects(p, pod) && ((p.spec as { egress?: { to: unknown }[] }).egress ?? []).some((e) => JSON.stringify(e.to) === registryPeer));
    expect(reaching(runtimePod)).toEqual([]);
    expect(reaching(exportPod).map((p) => p.metadata?.name)).toEqual(["evidence-export"]);
    // The export's pods reach the registry, the collector and DNS, and no declared destination.
    const exportEgress = policies.filter((p) => selects(p, exportPod) && (p.spec as { policyTypes: string[] }).policyTypes.includes("Egress") && p.metadata?.name !== "default-deny");
    expect(exportEgress.map((p) => p.metadata?.name).sort()).toEqual(["allow-dns", "evidence-collect", "evidence-export"]);
    const ingress = policies.find((p) => p.metadata?.name === "evidence-collect-ingress")!;
    expect(selects(ingress, runtimePod)).toBe(true);
    expect((ingress.spec as { ingress: { from: { podSelector: unknown }[] }[] }).ingress[0]!.from).toEqual([{ podSelector: { matchLabels: { ...(ingress.metadata?.labels as object), "workspaces.berth.dev/component": "evidence-export" } } }]);
  });

  it("the collector runs beside the runtime, before it starts, on the workspace's files read-only; the push credential goes to no container of the workload", () => {
    const objects = renderObjects(PERSISTENT);
    const pod = jobSpec(ofKind(objects, "Job")[0]).template.spec;
    expect(pod.initContainers!.map((c) => [c.name, c.restartPolicy])).toEqual([["checkout", undefined], ["evidence", "Always"]]);
    const collector = pod.initContainers![1]!;
    expect(collector.startupProbe?.httpGet).toEqual({ path: "/healthz", port: 9090 });
    expect(collector.volumeMounts).toContainEqual({ name: "workspace", mountPath: "/workspace", readOnly: true });
    expect(pod.terminationGracePeriodSeconds).toBe(120);
    const secretRefs = allContainers(pod).flatMap((c) => (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])));
    expect(secretRefs).not.toContain("alice-evidence-registry");
    expect(envOf(ofKind(objects, "Job")[0], "runtime").find((e) => e.name === "BERTH_VERIFICATION_RESULT")?.value).toBe("/workspace/.berth/verification.json");
  });

  it("an ephemeral workspace's collector reads the pod's own storage", () => {
    const pod = jobSpec(ofKind(renderObjects(REVIEW), "Job")[0]).template.spec;
    expect(pod.volumes!.find((v) => v.name === "workspace")?.emptyDir).toBeDefined();
    expect(pod.initContainers![1]!.volumeMounts).toContainEqual({ name: "workspace", mountPath: "/workspace", readOnly: true });
  });

  it("while the run goes on there is no export, and the retention clean-up is withheld", () => {
    const { workspace, observed, namespace } = running();
    const rsp = runFunction(request(workspace, { required: { ...ALL_REQUIRED, "workload-pods": [workloadPod(namespace, undefined)] }, observed }));
    expect(desired(rsp, "evidence-export")).toBeUndefined();
    expect(jobSpec(desired(rsp, "workload")).ttlSecondsAfterFinished).toBeUndefined();
    expect(statusOf(rsp).outcome).toBeUndefined();
    // Without exportBeforeCleanup the same workspace keeps its retention as a TTL.
    const plain = edited(REVIEW, (w) => ((w.spec as { lifecycle: { evidence: unknown } }).lifecycle.evidence = { exportBeforeCleanup: false }));
    expect(jobSpec(ofKind(renderObjects(plain), "Job")[0]).ttlSecondsAfterFinished).toBe(4320 * 60);
  });

  it("when the runtime exits, the outcome is recorded from it and the export is given that outcome, as recorded, and the collector's address", () => {
    const { ended } = afterRun({ exitCode: 3, finishedAt: "2026-12-07T10:04:00Z" });
    const outcome = statusOf(ended).outcome;
    expect(outcome).toEqual({ result: "Failed", reason: "WorkloadFailed", message: "the runtime exited with code 3", finishedAt: "2026-12-07T10:04:00Z" });
    const env = envOf(desired(ended, "evidence-export"), "export");
    expect(JSON.parse(env.find((e) => e.name === "BERTH_OUTCOME")!.value!)).toEqual(outcome);
    expect(env.find((e) => e.name === "BERTH_COLLECTOR_URL")?.value).toBe("http://10.244.0.17:9090");
    expect(env.find((e) => e.name === "BERTH_EVIDENCE_REPOSITORY")?.value).toBe("evidence.registry.example.com/berth/evidence");
    expect(env.find((e) => e.name === "BERTH_EVIDENCE_TAG")?.value).toBe("review-pr-987");
    // The Job that still runs the collector is not suspended (that would delete its pod), and keeps no TTL.
    expect(jobSpec(desired(ended, "workload")).suspend).toBeUndefined();
    expect(jobSpec(desired(ended, "workload")).ttlSecondsAfterFinished).toBeUndefined();
    expect(statusOf(ended).evidence).toMatchObject({ state: "Collecting" });
    expect(statusOf(ended).phase).toBe("Failed");
  });

  it("a runtime that completed makes the workspace Ready and Completed while its Job still runs the collector", () => {
    const { workspace, observed, namespace } = running();
    const notReady = { ...observed, workload: { ...observed.workload!, status: { active: 1, ready: 0 } } };
    const rsp = runFunction(request(workspace, { required: { ...ALL_REQUIRED, "workload-pods": [workloadPod(namespace, { exitCode: 0 })] }, observed: notReady }));
    expect([statusOf(rsp).phase, statusOf(rsp).reason]).toEqual(["Ready", "Completed"]);
    expect(rsp.desired?.resources?.workload?.ready).toBe(1);
  });

  it("the push credential goes to the export alone", () => {
    const { workspace, observed, namespace } = running(PERSISTENT);
    const rsp = runFunction(request(workspace, { required: { ...ALL_REQUIRED, "workload-pods": [workloadPod(namespace, { exitCode: 0 })] }, observed }));
    const auth = envOf(desired(rsp, "evidence-export"), "export").find((e) => e.name === "BERTH_REGISTRY_AUTH");
    expect(auth?.valueFrom).toEqual({ secretKeyRef: { name: "alice-evidence-registry", key: ".dockerconfigjson" } });
  });

  it("the export may send the credential to a token service on the evidence destination's hosts, and only when the profile lists some", () => {
    const exportEnv = (required: Record<string, KubeObject[]>) => {
      const { workspace, observed, namespace } = running(PERSISTENT, required);
      const rsp = runFunction(request(workspace, { required: { ...required, "workload-pods": [workloadPod(namespace, { exitCode: 0 })] }, observed }));
      return envOf(desired(rsp, "evidence-export"), "export");
    };
    expect(exportEnv(ALL_REQUIRED).map((e) => e.name)).toEqual(["BERTH_WORKSPACE_ID", "BERTH_EVIDENCE_REPOSITORY", "BERTH_EVIDENCE_TAG", "BERTH_SOURCE_REPOSITORY", "BERTH_SOURCE_REVISION", "BERTH_OUTCOME", "BERTH_COLLECTOR_URL", "BERTH_REGISTRY_AUTH"]);
    const withHosts = edited(PROFILE, (p) => ((p.spec as { destinations: Record<string, unknown>[] }).destinations.find((d) => d.name === "evidence-registry")!.hosts = ["evidence.registry.example.com", "auth.registry.example.com"]));
    expect(exportEnv({ ...ALL_REQUIRED, profile: [withHosts] }).at(-1)).toEqual({ name: "BERTH_TOKEN_REALM_HOSTS", value: "evidence.registry.example.com,auth.registry.example.com" });
  });

  it("an export that cannot push says why in status and a warning, is retried, and nothing is cleaned up", () => {
    const { next, namespace } = afterRun();
    const refused = { state: "Failed", reason: "Refused", message: "POST a blob upload: the registry answered 403 DENIED", attempts: 3, lastAttemptAt: "2026-12-07T10:05:00Z" };
    const rsp = next([exportPod(namespace, "evidence-export-a", 1, refused, EXPORT_UID, "2026-12-07T10:05:00Z"), exportPod(namespace, "evidence-export-b", 1, refused, EXPORT_UID, "2026-12-07T10:06:00Z")]);
    expect(statusOf(rsp).evidence).toEqual({ state: "Failed", reason: "Refused", message: refused.message, attempts: 2 });
    expect(statusOf(rsp).reason).toBe("EvidenceExportFailed");
    expect(messages(rsp)).toContain("the evidence export failed (2 attempts): Refused");
    expect(desired(rsp, "evidence-export")).toBeDefined();
    expect(jobSpec(desired(rsp, "workload")).ttlSecondsAfterFinished).toBeUndefined();
    expect(statusOf(rsp).outcome.evidence).toBeUndefined();
  });

  it("an exported artifact is recorded, the export Job goes, the retention clean-up comes back, and the record is never rewritten", () => {
    const { next, namespace } = afterRun();
    const rsp = next([exportPod(namespace, "evidence-export-a", 0, EXPORTED)]);
    const outcome = statusOf(rsp).outcome;
    expect(outcome).toEqual({
      result: "Succeeded",
      reason: "Completed",
      finishedAt: "2026-12-07T10:04:00Z",
      evidence: { repository: EXPORTED.repository, tag: "review-pr-987", digest: DIGEST, exportedAt: EXPORTED.exportedAt },
      verification: { exitCode: 1, output: "1 test failed", reportedBy: "runtime" },
    });
    expect(statusOf(rsp).evidence).toMatchObject({ state: "Exported" });
    expect(desired(rsp, "evidence-export")).toBeUndefined();
    expect(jobSpec(desired(rsp, "workload")).ttlSecondsAfterFinished).toBe(4320 * 60);
    // Later reports (a pod pushed again by hand, say) do not move the record.
    const recorded = edited(REVIEW, (w) => (w.status = { outcome }));
    const later = runFunction(
      request(recorded, { required: { ...ALL_REQUIRED, "evidence-export-pods": [exportPod(namespace, "evidence-export-z", 0, { ...EXPORTED, digest: `sha256:${"cd".repeat(32)}` })] }, observed: {} }),
    );
    expect(statusOf(later).outcome).toEqual(outcome);
  });

  it("a pod that is not the workload Job's own cannot end the run or name a collector", () => {
    const { workspace, observed, namespace } = running();
    const forged = edited(workloadPod(namespace, { exitCode: 0 }), (p) => (p.metadata!.ownerReferences = [{ uid: "some-other-uid", controller: true }]));
    const rsp = runFunction(request(workspace, { required: { ...ALL_REQUIRED, "workload-pods": [forged] }, observed }));
    expect(statusOf(rsp).outcome).toBeUndefined();
    expect(desired(rsp, "evidence-export")).toBeUndefined();
  });

  it("a pod that is not the export Job's own cannot report an export", () => {
    const { next, namespace } = afterRun();
    const rsp = next([exportPod(namespace, "forged", 0, EXPORTED, "some-other-uid")]);
    expect(statusOf(rsp).outcome.evidence).toBeUndefined();
    expect(desired(rsp, "evidence-export")).toBeDefined();
  });

  it("an operator's waiver, with its reason, ends the wait: recorded in status, clean-up proceeds", () => {
    const { next, namespace, recorded } = afterRun();
    const waived = edited(recorded, (w) => (w.metadata!.annotations = { "workspaces.berth.dev/evidence-waived": "registry decommissioned; evidence not needed (INC-1234)" }));
    const rsp = next([exportPod(namespace, "evidence-export-a", 1, { state: "Failed", reason: "Unreachable", message: "connect ECONNREFUSED", attempts: 1, lastAttemptAt: "2026-12-07T10:05:00Z" })], waived);
    expect(statusOf(rsp).evidence).toEqual({ state: "Waived", reason: "Waived", message: "the export was waived: registry decommissioned; evidence not needed (INC-1234)" });
    expect(desired(rsp, "evidence-export")).toBeUndefined();
    expect(jobSpec(desired(rsp, "workload")).ttlSecondsAfterFinished).toBe(4320 * 60);
  });
});

describe("private CAs for reviewed destinations", () => {
  const CA = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "internal-ca.crt", namespace: "platform" }, data: { "ca.crt": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" } };
  const withCa = (destination: string) => edited(PROFILE, (p) => ((p.spec as { destinations: Record<string, unknown>[] }).destinations.find((d) => d.name === destination)!.caBundle = { namespace: "platform", name: "internal-ca.crt" }));

  it("the git destination's CA is copied into the workspace and trusted by the checkout alone", () => {
    const objects = renderObjects(PERSISTENT, { ...ALL_REQUIRED, profile: [withCa("github")], "ca-bundle-github": [CA] });
    const copy = ofKind(objects, "ConfigMap").find((c) => c.metadata?.name === "ca-github");
    expect(copy?.data).toEqual({ "ca.crt": CA.data["ca.crt"] });
    const pod = jobSpec(ofKind(objects, "Job")[0]).template.spec;
    const checkout = pod.initContainers!.find((c) => c.name === "checkout")!;
    expect(checkout.env).toEqual(expect.arrayContaining([{ name: "SSL_CERT_FILE", value: "/etc/berth/ca/github/ca.crt" }, { name: "GIT_SSL_CAINFO", value: "/etc/berth/ca/github/ca.crt" }]));
    const mounting = allContainers(pod).filter((c) => c.volumeMounts?.some((m) => m.name === "ca-github"));
    expect(mounting.map((c) => c.name)).toEqual(["checkout"]);
  });

  it("the evidence registry's CA is trusted by the export", () => {
    const profile = withCa("evidence-registry");
    const withProfile = { ...ALL_REQUIRED, profile: [profile], "ca-bundle-evidence-registry": [CA] };
    const { workspace, observed, namespace } = running(PERSISTENT, withProfile);
    const rsp = runFunction(request(workspace, { required: { ...withProfile, "workload-pods": [workloadPod(namespace, { exitCode: 0 })] }, observed }));
    const job = desired(rsp, "evidence-export");
    expect(envOf(job, "export")).toContainEqual({ name: "SSL_CERT_FILE", value: "/etc/berth/ca/evidence-registry/ca.crt" });
    expect(jobSpec(job).template.spec.volumes).toContainEqual({ name: "ca-evidence-registry", configMap: { name: "ca-evidence-registry" } });
  });

  it("a gated MCP server's CA is trusted by the MCP gate alone, in a DeveloperWorkspace and an ExecutionWorkspace", () => {
    const required = { ...ALL_REQUIRED, profile: [withCa("docs-mcp")], "ca-bundle-docs-mcp": [CA] };
    const gateOf = (objects: Record<string, KubeObject>) => (ofKind(objects, "Deployment")[0]!.spec as { template: { spec: IPodSpec } }).template.spec;
    const objects = renderObjects(PERSISTENT, required);
    expect(ofKind(objects, "ConfigMap").find((c) => c.metadata?.name === "ca--mcp-gate")?.data).toEqual({ "ca.crt": CA.data["ca.crt"] });
    const gate = gateOf(objects);
    expect(gate.containers[0]!.env).toContainEqual({ name: "NODE_EXTRA_CA_CERTS", value: "/etc/berth/ca/mcp-gate/ca.crt" });
    expect(gate.volumes).toContainEqual({ name: "ca", configMap: { name: "ca--mcp-gate" } });
    const workload = jobSpec(ofKind(objects, "Job")[0]).template.spec;
    expect(allContainers(workload).some((c) => (c.env ?? []).some((e) => e.name === "NODE_EXTRA_CA_CERTS"))).toBe(false);
    const ew = edited(EW_SANDBOX, (w) => {
      const requests = (w.spec as { requests: { capabilities?: Record<string, unknown> } }).requests;
      requests.capabilities = { ...requests.capabilities, mcp: [{ name: "docs", destination: "docs-mcp", tools: ["search"] }] };
    });
    const ewObjects = renderObjects(ew, { ...SANDBOX_REQUIRED, profile: [withCa("docs-mcp")], "ca-bundle-docs-mcp": [CA] });
    expect(gateOf(ewObjects).containers[0]!.env).toContainEqual({ name: "NODE_EXTRA_CA_CERTS", value: "/etc/berth/ca/mcp-gate/ca.crt" });
  });

  it("a CA ConfigMap that is missing, or holds no certificate, is named in the refusal", () => {
    const missing = runFunction(request(PERSISTENT, { required: { ...ALL_REQUIRED, profile: [withCa("github")], "ca-bundle-github": [] } }));
    expect(messages(missing)).toContain('WorkspaceProfile "standard" spec.destinations[0].caBundle: ConfigMap "platform/internal-ca.crt" not found');
    const empty = runFunction(request(PERSISTENT, { required: { ...ALL_REQUIRED, profile: [withCa("github")], "ca-bundle-github": [{ ...CA, data: { "ca.crt": "not a certificate" } }] } }));
    expect(messages(empty)).toContain('WorkspaceProfile "standard" spec.destinations[0].caBundle: ConfigMap "platform/internal-ca.crt" has no PEM certificate under key "ca.crt"');
  });
});
