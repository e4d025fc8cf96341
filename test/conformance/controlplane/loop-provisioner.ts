// A volume provisioner whose capacity is enforced while the volume is written: each volume is
// an ext4 filesystem of exactly the requested size, on a loop device, mounted under the node's
// folder and offered as a `local` PersistentVolume pinned to the node. Writing past the size
// fails with ENOSPC, so a profile on this StorageClass declares `capacityEnforcement: Runtime`
// honestly. No provisioner the Go module proxy serves does that without a CSI driver stack, so
// the harness does it itself, as an external provisioner would: it watches for claims the
// scheduler has placed (WaitForFirstConsumer) and deletes released volumes of reclaim policy
// Delete.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Kube } from "./kube.js";
import { loadRecord, run, saveRecord } from "./node-host.js";
import { quantityValue } from "../../../functions/berth/schema/quantity.js";

export const LOOP_PROVISIONER = "live.berth.dev/loop-ext4";
const SELECTED_NODE = "volume.kubernetes.io/selected-node";

export interface LoopProvisioner {
  /** Volumes provisioned so far, by PV name. */
  readonly volumes: Map<string, { image: string; mount: string; device: string }>;
  stop(): Promise<void>;
}

interface Claim {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
  spec: { storageClassName?: string; volumeName?: string; accessModes?: string[]; resources?: { requests?: { storage?: string } } };
}

export function startLoopProvisioner(kube: Kube, nodeDir: string, nodeName: string, log: (m: string) => void): LoopProvisioner {
  const volumes = new Map<string, { image: string; mount: string; device: string }>();
  const failed = new Set<string>();
  let stopped = false;

  const provision = async (claim: Claim, reclaimPolicy: string) => {
    const pv = `pvc-${claim.metadata.uid}`;
    const size = claim.spec.resources?.requests?.storage ?? "1Gi";
    const bytes = quantityValue(size);
    const image = join(nodeDir, "volumes", `${pv}.img`);
    const mount = join(nodeDir, "volumes", pv);
    const record = loadRecord(nodeDir);
    record.volumeImages.push(image);
    saveRecord(record);
    mkdirSync(mount, { recursive: true });
    await run("truncate", ["-s", String(bytes), image]);
    // No reserved blocks and one inode per 16 KiB: the claim's size is what its owner can write.
    await run("mkfs.ext4", ["-q", "-F", "-m", "0", "-i", "16384", "-E", "lazy_itable_init=0,lazy_journal_init=0", image]);
    const device = (await run("losetup", ["--find", "--show", image])).stdout.trim();
    await run("mount", ["-n", "-t", "ext4", device, mount]);
    volumes.set(pv, { image, mount, device });
    await kube.apply({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: pv, annotations: { "pv.kubernetes.io/provisioned-by": LOOP_PROVISIONER } },
      spec: {
        capacity: { storage: size },
        accessModes: claim.spec.accessModes ?? ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: reclaimPolicy,
        storageClassName: claim.spec.storageClassName,
        volumeMode: "Filesystem",
        local: { path: mount, fsType: "ext4" },
        claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [nodeName] }] }] } },
      },
    });
    log(`provisioned ${pv} for ${claim.metadata.namespace}/${claim.metadata.name}: ext4 of ${size} on ${device}`);
  };

  const release = async (pv: string) => {
    const v = volumes.get(pv);
    if (v) {
      await run("umount", ["-n", v.mount], { allowFailure: true });
      await run("losetup", ["-d", v.device], { allowFailure: true });
      rmSync(v.image, { force: true });
      rmSync(v.mount, { recursive: true, force: true });
      volumes.delete(pv);
    }
    await kube.delete("v1", "PersistentVolume", pv);
    log(`deleted ${pv} (released, reclaim policy Delete)`);
  };

  const reconcile = async () => {
    const classes = new Map<string, string>();
    for (const sc of await kube.list("storage.k8s.io/v1", "StorageClass")) {
      if (sc.provisioner === LOOP_PROVISIONER) classes.set(sc.metadata.name, sc.reclaimPolicy ?? "Delete");
    }
    if (classes.size === 0) return;
    const pvs = await kube.list("v1", "PersistentVolume");
    const existing = new Set(pvs.map((p: { metadata: { name: string } }) => p.metadata.name));
    for (const claim of (await kube.listAllNamespaces("v1", "PersistentVolumeClaim")) as Claim[]) {
      const policy = classes.get(claim.spec.storageClassName ?? "");
      const pv = `pvc-${claim.metadata.uid}`;
      if (policy === undefined || claim.spec.volumeName || existing.has(pv) || failed.has(pv)) continue;
      if (claim.metadata.annotations?.[SELECTED_NODE] !== nodeName) continue;
      try {
        await provision(claim, policy);
      } catch (e) {
        failed.add(pv);
        log(`cannot provision ${pv}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    for (const p of pvs) {
      if (p.metadata.annotations?.["pv.kubernetes.io/provisioned-by"] !== LOOP_PROVISIONER) continue;
      if (p.status?.phase === "Released" && p.spec.persistentVolumeReclaimPolicy === "Delete") await release(p.metadata.name);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        await reconcile();
      } catch (e) {
        if (!stopped) log(`loop provisioner: ${e instanceof Error ? e.message : String(e)}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();

  return {
    volumes,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
