import { describe, expect, it } from "vitest";
import { ADMISSION_ONLY_PROVISIONERS, evaluateCapacity } from "../../functions/berth/resolve/capacity.js";

const storage = { storageClassName: "fast", capacityEnforcement: "Runtime" as const, maxSize: "50Gi" };
const storageClass = (provisioner: string, reclaimPolicy?: string) => ({
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: { name: "fast" },
  provisioner,
  ...(reclaimPolicy ? { reclaimPolicy } : {}),
});

describe("capacity declaration", () => {
  it.each(ADMISSION_ONLY_PROVISIONERS)("%s is never conforming, whatever the operator declares", (provisioner) => {
    const c = evaluateCapacity(storage, storageClass(provisioner));
    expect([c.conforming, c.reason]).toEqual([false, "AdmissionOnlyProvisioner"]);
  });

  it.each(["AdmissionOnly", "None"] as const)("a declaration of %s is not conforming", (declared) => {
    const c = evaluateCapacity({ ...storage, capacityEnforcement: declared }, storageClass("xfs.csi.example.com"));
    expect([c.conforming, c.reason]).toEqual([false, "RuntimeEnforcementNotDeclared"]);
  });

  it("Runtime on another provisioner is accepted as the operator's declaration, and reclaimPolicy defaults to Delete", () => {
    const c = evaluateCapacity(storage, storageClass("xfs.csi.example.com"));
    expect(c).toMatchObject({ conforming: true, reason: "RuntimeEnforcementDeclared", provisioner: "xfs.csi.example.com", reclaimPolicy: "Delete" });
    expect(evaluateCapacity(storage, storageClass("xfs.csi.example.com", "Retain")).reclaimPolicy).toBe("Retain");
  });
});
