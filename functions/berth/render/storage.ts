import type { IPersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import type { IVolume } from "kubernetes-models/v1/Volume";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { kube } from "./objects.js";

export const WORKSPACE_VOLUME = "workspace";

/** The workspace's volume claim on the profile's quota storage class; none for ephemeral workspaces. */
export function renderPersistentVolumeClaim(p: NamespaceProfile): KubeObject | undefined {
  if (p.volume.mode !== "persistent") return undefined;
  return kube<IPersistentVolumeClaim>({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: p.profile.storage.storageClassName,
      resources: { requests: { storage: p.volume.size } },
      ...(p.volume.dataSource ? { dataSource: p.volume.dataSource } : {}),
    },
  });
}

/**
 * How a workload mounts the workspace's files: the claim, or an emptyDir whose size limit
 * makes the kubelet evict the pod before it fills the node.
 */
export function workspaceVolume(p: NamespaceProfile): IVolume {
  return p.volume.mode === "persistent"
    ? { name: WORKSPACE_VOLUME, persistentVolumeClaim: { claimName: WORKSPACE_OBJECT_NAME } }
    : { name: WORKSPACE_VOLUME, emptyDir: { sizeLimit: p.volume.size } };
}
