import type { KubeObject } from "../model.js";
import type { Problem } from "../problems.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import type { CapacityStatus } from "../schema/status.js";

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

/**
 * Persistent volumes are accepted only where the profile's storage bounds capacity at
 * runtime; and a volume can outlive its workspace only if its StorageClass retains volumes.
 * `retainField` names the document field that asks for the volume to be kept, if any.
 */
export function checkCapacity(capacity: CapacityDeclaration, retainField?: string): Problem | undefined {
  if (!capacity.conforming) {
    return { type: "refused", reason: "CapacityNotEnforced", message: `persistent storage refused: ${capacity.message}` };
  }
  if (retainField !== undefined && capacity.reclaimPolicy !== "Retain") {
    return {
      type: "invalid",
      message: `${retainField}: Retain needs a StorageClass that retains volumes, but "${capacity.storageClassName}" has reclaimPolicy ${capacity.reclaimPolicy}`,
    };
  }
  return undefined;
}

/** The capacity declaration as a workspace's status reports it: declared versus enforced, and why. */
export function capacityStatus(volume: { mode: "persistent" | "ephemeral"; size: string }, capacity: CapacityDeclaration | undefined): CapacityStatus {
  if (volume.mode === "ephemeral" || capacity === undefined) {
    return {
      mode: "ephemeral",
      size: volume.size,
      enforcement: "EmptyDirSizeLimit",
      enforced: true,
      message: "ephemeral storage is an emptyDir the kubelet evicts past its size limit",
    };
  }
  return {
    mode: "persistent",
    size: volume.size,
    storageClassName: capacity.storageClassName,
    ...(capacity.provisioner ? { provisioner: capacity.provisioner } : {}),
    declared: capacity.declared,
    enforcement: capacity.conforming ? "Runtime" : "NotEnforced",
    enforced: capacity.conforming,
    reason: capacity.reason,
    message: capacity.message,
  };
}
