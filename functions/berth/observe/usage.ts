import type { KubeObject } from "../model.js";
import type { ResourceUsage } from "../schema/status.js";

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
 * `{ usage }` for a workspace's status: the quota's count in every phase, or nothing while the
 * quota has not been counted. Also while the workspace moves: a workspace stuck provisioning
 * (an image that cannot be pulled, a volume never bound) is the one an operator reads usage for,
 * and a count kept from earlier would hide the pod the quota already counts. (Keeping the last
 * count while moving saved a write or two per transition against Crossplane's per-XR watch
 * circuit breaker; the short TTL while the breaker holds an XR covers that case instead.)
 */
export function usageOf(quota: KubeObject | undefined): { usage?: ResourceUsage } {
  const usage = quotaUsage(quota);
  return usage === undefined ? {} : { usage };
}
