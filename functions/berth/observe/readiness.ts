import type { DesiredResource, KubeObject } from "../model.js";
import { sandboxRunning } from "./sandbox-status.js";

type Status =
  | {
      phase?: string;
      ready?: number;
      succeeded?: number;
      replicas?: number;
      availableReplicas?: number;
      readyToUse?: boolean;
      conditions?: { type?: string; status?: string }[];
    }
  | undefined;

const statusConditionTrue = (s: Status, type: string) => (s?.conditions ?? []).some((c) => c.type === type && c.status === "True");

/** Whether an observed object reports condition `type` as True. */
export function conditionTrue(observed: KubeObject | undefined, type: string): boolean {
  return statusConditionTrue(observed?.status as Status, type);
}

/**
 * Health checks for the kinds that report one. Every other kind Berth renders (ServiceAccount,
 * NetworkPolicy, ResourceQuota, LimitRange, Role, RoleBinding, ConfigMap, Service) has no health status,
 * so it is ready as soon as it is desired (see withReadiness).
 */
const HEALTH: Record<string, (status: Status, observed: KubeObject) => boolean> = {
  Namespace: (s) => s?.phase === "Active",
  PersistentVolumeClaim: (s) => s?.phase === "Bound",
  // The MCP gate: ready once its pod answers its readiness probe.
  Deployment: (s) => (s?.availableReplicas ?? 0) >= 1,
  Job: (s) => (s?.ready ?? 0) >= 1 || (s?.succeeded ?? 0) >= 1,
  VolumeSnapshot: (s) => s?.readyToUse === true,
  VolumeSnapshotContent: (s) => s?.readyToUse === true,
  // Ready for the Sandbox's current spec, not a Ready written before Berth last changed it.
  Sandbox: (_, o) => sandboxRunning(o),
  WorkerPool: (s) => (s?.replicas ?? 0) >= 1,
  ActorTemplate: (s) => statusConditionTrue(s, "Ready") || s?.phase === "Ready",
};

export function isReady(observed: KubeObject | undefined): boolean {
  if (observed === undefined) return false;
  const check = HEALTH[observed.kind];
  return check === undefined ? true : check(observed.status as Status, observed);
}

/**
 * Pairs each desired object with its readiness: what was observed under the same name, by its
 * kind's health check. A kind with no health check is ready in the response that creates it,
 * since Crossplane applies it in the same reconcile or fails that reconcile: reporting it not
 * ready until the next one observes it cost, for every object created, one "Composed resource
 * ... is not yet ready" Event on the XR and one more change of the XR's Ready message (a write,
 * an update event, one more reconcile).
 */
export function withReadiness(objects: Record<string, KubeObject>, observed: Record<string, KubeObject>): Record<string, DesiredResource> {
  const resources: Record<string, DesiredResource> = {};
  for (const [name, object] of Object.entries(objects)) resources[name] = { object, ready: HEALTH[object.kind] === undefined || isReady(observed[name]) };
  return resources;
}

/** Composition resource names not ready yet, sorted, for status messages. */
export function unready(resources: Record<string, DesiredResource>): string[] {
  return Object.entries(resources)
    .filter(([, r]) => !r.ready)
    .map(([name]) => name)
    .sort();
}

/**
 * What a workspace says while some of its objects are not ready yet: one message for the whole
 * phase. Crossplane's own Ready condition names the objects not ready ("Unready resources: ...");
 * a message naming them too would change as each became ready, and every change is one more
 * write of the XR, one more update event and one more reconcile, which Crossplane's per-XR watch
 * circuit breaker counts against the workspace.
 */
export const PROVISIONING = {
  phase: "Provisioning",
  reason: "Provisioning",
  message: "creating the workspace's objects; its Ready condition names those not ready yet",
} as const;
