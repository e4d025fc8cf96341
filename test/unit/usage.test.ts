import { Severity } from "@crossplane-org/function-sdk-typescript";
import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import { quotaUsage } from "../../functions/berth/observe/usage.js";
import { EW_SANDBOX, existingNamespace, request, SANDBOX_REQUIRED } from "../fixtures.js";

const quota = (status?: object) => ({ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "workspace", namespace: "ws-x" }, ...(status ? { status } : {}) });

describe("a workspace's resource use, read from its ResourceQuota", () => {
  it("is unknown until the quota controller has counted the quota", () => {
    expect(quotaUsage(undefined)).toBeUndefined();
    expect(quotaUsage(quota())).toBeUndefined();
    expect(quotaUsage(quota({ hard: { "limits.cpu": "1" } }))).toBeUndefined();
  });

  it("is used/hard for the limits, the volume and pods; a key not yet counted is 0; a budget of 0 (no volume) is left out; other keys are not shown", () => {
    const counted = quota({
      hard: { "limits.cpu": "500m", "limits.memory": "256Mi", "requests.storage": "0", pods: "4", secrets: "16" },
      used: { "limits.cpu": "100m", "limits.memory": "128Mi", "requests.storage": "0", secrets: "1" },
    });
    expect(quotaUsage(counted)).toEqual({ cpu: "100m/500m", memory: "128Mi/256Mi", pods: "0/4" });
  });

  it("an ExecutionWorkspace's status carries it too", () => {
    const namespace = existingNamespace(EW_SANDBOX);
    const counted = quota({ hard: { "limits.cpu": "1", "limits.memory": "2Gi", "requests.storage": "10Gi", pods: "4" }, used: { "limits.cpu": "1", "limits.memory": "2Gi", "requests.storage": "10Gi", pods: "1" } });
    counted.metadata.namespace = namespace.metadata!.name!;
    const rsp = runFunction(request(EW_SANDBOX, { required: SANDBOX_REQUIRED, observed: { namespace, "resource-quota": counted } }));
    expect(rsp.results.filter((r) => r.severity === Severity.SEVERITY_FATAL)).toEqual([]);
    expect((rsp.desired?.composite?.resource as { status?: { usage?: unknown } }).status?.usage).toEqual({ cpu: "1/1", memory: "2Gi/2Gi", storage: "10Gi/10Gi", pods: "1/4" });
  });

  it("follows the quota while the workspace is still provisioning, over a count its status recorded earlier", () => {
    // A workspace stuck provisioning (its image cannot be pulled) is where an operator reads
    // usage: its pod is counted by the quota and must show, not the 0 pods of an earlier pass.
    const composite = structuredClone(EW_SANDBOX);
    (composite as { status?: object }).status = { phase: "Provisioning", usage: { cpu: "0/1", memory: "0/2Gi", storage: "10Gi/10Gi", pods: "0/4" } };
    const namespace = existingNamespace(EW_SANDBOX);
    const counted = quota({ hard: { "limits.cpu": "1", "limits.memory": "2Gi", "requests.storage": "10Gi", pods: "4" }, used: { "limits.cpu": "1", "limits.memory": "2Gi", "requests.storage": "10Gi", pods: "1" } });
    counted.metadata.namespace = namespace.metadata!.name!;
    const rsp = runFunction(request(composite, { required: SANDBOX_REQUIRED, observed: { namespace, "resource-quota": counted } }));
    const status = (rsp.desired?.composite?.resource as { status?: { phase?: string; usage?: unknown } }).status;
    expect(status?.phase).toBe("Provisioning");
    expect(status?.usage).toEqual({ cpu: "1/1", memory: "2Gi/2Gi", storage: "10Gi/10Gi", pods: "1/4" });
  });
});
