import type { KubeObject } from "../model.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";

const SNAPSHOT_API = "snapshot.storage.k8s.io/v1";

/** A CSI snapshot of a workspace's volume: its files only, never process memory. */
export function renderCheckpointSnapshot(o: { name: string; namespace: string; labels: Record<string, string>; volumeSnapshotClassName?: string }): KubeObject {
  return {
    apiVersion: SNAPSHOT_API,
    kind: "VolumeSnapshot",
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
    spec: {
      ...(o.volumeSnapshotClassName ? { volumeSnapshotClassName: o.volumeSnapshotClassName } : {}),
      source: { persistentVolumeClaimName: WORKSPACE_OBJECT_NAME },
    },
  };
}

export const RESTORE_SNAPSHOT = "restore";

/** Where a restored or forked workspace's volume takes its files from. */
export interface SnapshotSource {
  snapshotHandle: string;
  driver: string;
  volumeSnapshotClassName?: string;
}

/**
 * Brings a checkpoint into another namespace. Cross-namespace volume data sources are still
 * alpha, so the snapshot is bound again by hand: a pre-provisioned VolumeSnapshotContent that
 * points at the source snapshot's handle, and a VolumeSnapshot in the new namespace bound to
 * it. The content retains the snapshot when deleted: the checkpoint it came from stays whole.
 */
export function renderRestoreSource(p: { namespace: string; labels: Record<string, string> }, source: SnapshotSource): Record<string, KubeObject> {
  const contentName = `${p.namespace}-${RESTORE_SNAPSHOT}`;
  return {
    "restore-content": {
      apiVersion: SNAPSHOT_API,
      kind: "VolumeSnapshotContent",
      metadata: { name: contentName, labels: p.labels },
      spec: {
        deletionPolicy: "Retain",
        driver: source.driver,
        source: { snapshotHandle: source.snapshotHandle },
        ...(source.volumeSnapshotClassName ? { volumeSnapshotClassName: source.volumeSnapshotClassName } : {}),
        volumeSnapshotRef: { namespace: p.namespace, name: RESTORE_SNAPSHOT },
      },
    },
    "restore-snapshot": {
      apiVersion: SNAPSHOT_API,
      kind: "VolumeSnapshot",
      metadata: { name: RESTORE_SNAPSHOT, namespace: p.namespace, labels: p.labels },
      spec: { source: { volumeSnapshotContentName: contentName } },
    },
  };
}

export const RESTORE_DATA_SOURCE = { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: RESTORE_SNAPSHOT };
