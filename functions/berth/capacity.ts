import type { KubeObject } from "./model.js";
import type { WorkspaceProfileSpec } from "./schema/profile.js";

/**
 * Provisioners that size a volume when it is created and never bound it again: a workspace
 * on them can fill the node's disk whatever size it asked for. The seed names local-path;
 * the others are hostPath provisioners that behave the same way.
 */
export const ADMISSION_ONLY_PROVISIONERS: readonly string[] = [
  "rancher.io/local-path",
  "kubernetes.io/no-provisioner",
  "k8s.io/minikube-hostpath",
  "docker.io/hostpath",
  "microk8s.io/hostpath",
  "openebs.io/local",
];

/**
 * What a profile promises about persistent capacity, and whether Berth accepts it.
 * `conforming` is Berth's acceptance gate: the operator's declaration of Runtime enforcement
 * on a provisioner not known to size at admission only. It is not a certification.
 */
export interface CapacityDeclaration {
  storageClassName: string;
  provisioner?: string;
  reclaimPolicy?: string;
  declared: WorkspaceProfileSpec["storage"]["capacityEnforcement"];
  conforming: boolean;
  reason: "RuntimeEnforcementDeclared" | "AdmissionOnlyProvisioner" | "RuntimeEnforcementNotDeclared";
  message: string;
}

export function evaluateCapacity(storage: WorkspaceProfileSpec["storage"], storageClass: KubeObject): CapacityDeclaration {
  const provisioner = typeof storageClass.provisioner === "string" ? storageClass.provisioner : undefined;
  // Kubernetes defaults an unset reclaimPolicy to Delete.
  const reclaimPolicy = typeof storageClass.reclaimPolicy === "string" ? storageClass.reclaimPolicy : "Delete";
  const base = { storageClassName: storage.storageClassName, provisioner, reclaimPolicy, declared: storage.capacityEnforcement };
  if (provisioner !== undefined && ADMISSION_ONLY_PROVISIONERS.includes(provisioner)) {
    return {
      ...base,
      conforming: false,
      reason: "AdmissionOnlyProvisioner",
      message: `StorageClass "${storage.storageClassName}" uses ${provisioner}, which sizes volumes at admission only: it is not a conforming persistent-capacity backend`,
    };
  }
  if (storage.capacityEnforcement !== "Runtime") {
    return {
      ...base,
      conforming: false,
      reason: "RuntimeEnforcementNotDeclared",
      message: `the profile declares capacityEnforcement ${storage.capacityEnforcement}; persistent workspaces need Runtime`,
    };
  }
  return {
    ...base,
    conforming: true,
    reason: "RuntimeEnforcementDeclared",
    message: `the operator declares runtime-enforced capacity for StorageClass "${storage.storageClassName}" (${provisioner ?? "unknown provisioner"}); an acceptance gate, not a certification`,
  };
}
