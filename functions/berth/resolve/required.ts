import type { z } from "zod";
import type { KubeObject, LabelledRequirement, NamedRequirement, Observed, Requirement } from "../model.js";
import type { Problem } from "../problems.js";
import { parseDocument } from "../../contracts/parse-document.js";

export type Lookup = { state: "pending" } | { state: "missing" } | { state: "found"; object: KubeObject };

/** How a requirement reads in a status message: `StorageClass "xfs-quota"`. */
export function describeRequirement(r: NamedRequirement): string {
  return `${r.kind} "${r.namespace === undefined ? "" : `${r.namespace}/`}${r.name}"`;
}

/**
 * Collects the cluster objects a render needs. Every call both records the requirement (so
 * each response states all of them and Crossplane's requirement loop settles) and answers
 * with what Crossplane has fetched so far.
 */
export class RequiredResources {
  readonly requirements: Record<string, Requirement> = {};

  constructor(private readonly observed: Observed) {}

  get(key: string, requirement: NamedRequirement): Lookup {
    this.requirements[key] = requirement;
    const items = this.observed.required[key];
    if (items === undefined) return { state: "pending" };
    const object = items.find((o) => o.metadata?.name === requirement.name);
    return object === undefined ? { state: "missing" } : { state: "found", object };
  }

  /** Every object that matches the labels, or undefined while Crossplane has not fetched them. */
  list(key: string, requirement: LabelledRequirement): KubeObject[] | undefined {
    this.requirements[key] = requirement;
    return this.observed.required[key];
  }

  /**
   * An object the render cannot go on without, or why it cannot yet: Crossplane is still
   * fetching it (reason `WaitingFor<noun>`), or it does not exist (`<noun>NotFound`, the
   * message prefixed with the document field that named it).
   */
  need(key: string, requirement: NamedRequirement, noun: string, field?: string): { type: "found"; object: KubeObject } | Problem {
    const lookup = this.get(key, requirement);
    if (lookup.state === "pending") return { type: "fetching", reason: `WaitingFor${noun}`, message: `waiting for ${describeRequirement(requirement)}` };
    if (lookup.state === "missing") return { type: "waiting", reason: `${noun}NotFound`, message: `${field ? `${field}: ` : ""}${describeRequirement(requirement)} not found` };
    return { type: "found", object: lookup.object };
  }

  /** Like `need`, for one of Berth's own documents, validated with its schema. */
  needDocument<S extends z.ZodType>(key: string, requirement: NamedRequirement, noun: string, schema: S, field?: string): { type: "found"; document: z.output<S> } | Problem {
    const found = this.need(key, requirement, noun, field);
    if (found.type !== "found") return found;
    const parsed = parseDocument(schema, found.object);
    if (!parsed.ok) return { type: "invalid", message: `${describeRequirement(requirement)} is invalid: ${parsed.problems.join("; ")}` };
    return { type: "found", document: parsed.value };
  }
}
