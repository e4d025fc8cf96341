import type { KubeObject, Observed, Requirement } from "./model.js";

export type Lookup = { state: "pending" } | { state: "missing" } | { state: "found"; object: KubeObject };

/**
 * Collects the cluster objects a render needs. Every call both records the requirement (so
 * each response states all of them and Crossplane's requirement loop settles) and answers
 * with what Crossplane has fetched so far.
 */
export class RequiredResources {
  readonly requirements: Record<string, Requirement> = {};

  constructor(private readonly observed: Observed) {}

  get(key: string, requirement: Requirement): Lookup {
    this.requirements[key] = requirement;
    const items = this.observed.required[key];
    if (items === undefined) return { state: "pending" };
    const object = items.find((o) => o.metadata?.name === requirement.name);
    return object === undefined ? { state: "missing" } : { state: "found", object };
  }
}

/** How a requirement reads in a status message: `StorageClass "xfs-quota"`. */
export function describeRequirement(r: Requirement): string {
  return `${r.kind} "${r.namespace === undefined ? "" : `${r.namespace}/`}${r.name}"`;
}
