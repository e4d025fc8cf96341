import type { KubeObject } from "./model.js";
import { atRest } from "./phases.js";
import type { ResourceUsage } from "./schema/status.js";

// What a workspace uses of its budget, as its ResourceQuota's own status counts it (the API
// server's quota controller keeps `used` against `hard`), so `kubectl get` shows per workspace
// what would otherwise take reading every namespace's quota.

/** The quota keys shown, by status field: the limits (Berth sets requests equal to them) and the one volume. */
const SHOWN = { cpu: "limits.cpu", memory: "limits.memory", storage: "requests.storage", pods: "pods" } as const;

/**
 * "used/hard" for each budgeted resource the quota's status reports, from the observed quota;
 * undefined until the quota controller has counted it. A hard limit of 0 (storage of an
 * ephemeral workspace) is not a budget and is left out.
 */
export function quotaUsage(quota: KubeObject | undefined): ResourceUsage | undefined {
  const status = quota?.status as { hard?: Record<string, string>; used?: Record<string, string> } | undefined;
  if (status?.hard === undefined || status.used === undefined) return undefined;
  const usage: ResourceUsage = {};
  for (const [field, key] of Object.entries(SHOWN) as [keyof ResourceUsage, string][]) {
    const hard = status.hard[key];
    if (hard === undefined || hard === "0") continue;
    usage[field] = `${status.used[key] ?? "0"}/${hard}`;
  }
  return usage;
}

/**
 * `{ usage }` for a workspace's status in `phase`: the quota's count once the workspace is at
 * rest; while it moves (provisioning, suspending, resuming), the count it last recorded. The count
 * changes as a pod starts and stops, and each change written to the XR is one more update event
 * and one more reconcile, which Crossplane's per-XR watch circuit breaker counts against the
 * workspace; the count that matters is the one it rests with, written with its phase. Nothing
 * while the quota has not been counted and nothing was recorded.
 */
export function usageOf(quota: KubeObject | undefined, phase: string | undefined, recorded: ResourceUsage | undefined): { usage?: ResourceUsage } {
  const usage = atRest(phase) ? quotaUsage(quota) : (recorded ?? quotaUsage(quota));
  return usage === undefined ? {} : { usage };
}
