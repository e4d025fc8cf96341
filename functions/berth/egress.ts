import type { INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort";
import type { Problem } from "./problems.js";
import { describeRequirement, type RequiredResources } from "./required.js";
import { egressToCidrs, egressToPods } from "./render/network-policies.js";
import type { Capabilities } from "./schema/capabilities.js";
import type { WorkspaceProfileSpec } from "./schema/profile.js";
import type { Egress } from "./workspace.js";

/** A declared capability that needs egress, with the field that declared it. */
export interface CapabilityRequest {
  /** Policy name suffix: `git`, `inference`, `mcp-<name>`, `registry-<destination>`, `kubernetes`. */
  name: string;
  /** Where it was declared, for error messages: `spec.capabilities.mcp[1]`. */
  field: string;
  destination: string;
}

/** Every capability in a document that opens egress, in a stable order. */
export function declaredCapabilities(c: Capabilities, field = "spec.capabilities"): CapabilityRequest[] {
  const requests: CapabilityRequest[] = [];
  if (c.git) requests.push({ name: "git", field: `${field}.git`, destination: c.git.destination });
  if (c.inference) requests.push({ name: "inference", field: `${field}.inference`, destination: c.inference.destination });
  c.mcp.forEach((m, i) => requests.push({ name: `mcp-${m.name}`, field: `${field}.mcp[${i}]`, destination: m.destination }));
  c.registries.forEach((r, i) => requests.push({ name: `registry-${r.destination}`, field: `${field}.registries[${i}]`, destination: r.destination }));
  if (c.kubernetes.access !== "none" && c.kubernetes.destination !== undefined) {
    requests.push({ name: "kubernetes", field: `${field}.kubernetes`, destination: c.kubernetes.destination });
  }
  return requests;
}

export type EgressResolution = { type: "resolved"; egress: Egress[] } | Problem;

/**
 * Turns declared capabilities into egress openings through the profile's reviewed
 * destinations. A Service destination is read from the cluster (a required resource) so that
 * the policy selects exactly the pods behind it, in its own namespace.
 */
export function resolveEgress(
  requests: readonly CapabilityRequest[],
  profile: { name: string; spec: WorkspaceProfileSpec },
  required: RequiredResources,
): EgressResolution {
  const egress: Egress[] = [];
  const seen = new Set<string>();
  // Every Service is asked for before any problem is reported, so that Crossplane fetches
  // them all in one round of its requirement loop.
  let problem: Problem | undefined;
  for (const request of requests) {
    if (seen.has(request.name)) {
      problem ??= { type: "invalid", message: `${request.field}: capability ${request.name} is declared twice` };
      continue;
    }
    seen.add(request.name);
    const destination = profile.spec.destinations.find((d) => d.name === request.destination);
    if (destination === undefined) {
      problem ??= {
        type: "invalid",
        message: `${request.field}.destination: WorkspaceProfile "${profile.name}" reviews no destination "${request.destination}"`,
      };
      continue;
    }
    if (destination.cidrs !== undefined) {
      egress.push({ name: request.name, destination: destination.name, ...egressToCidrs(destination.cidrs, destination.ports ?? []) });
      continue;
    }
    const ref = destination.service!;
    const requirement = { apiVersion: "v1", kind: "Service", namespace: ref.namespace, name: ref.name };
    const lookup = required.need(`service-${ref.namespace}-${ref.name}`, requirement, "Destination", `reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}"`);
    if (lookup.type !== "found") {
      problem ??= lookup;
      continue;
    }
    const spec = (lookup.object.spec ?? {}) as { selector?: Record<string, string>; ports?: { port?: number; targetPort?: number | string; protocol?: string }[] };
    if (spec.selector === undefined || Object.keys(spec.selector).length === 0) {
      problem ??= {
        type: "invalid",
        message: `reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}": ${describeRequirement(requirement)} has no pod selector; review it as cidrs and ports instead`,
      };
      continue;
    }
    const ports: INetworkPolicyPort[] = (spec.ports ?? []).map((p) => ({
      port: p.targetPort ?? p.port,
      protocol: (p.protocol ?? "TCP") as INetworkPolicyPort["protocol"],
    }));
    egress.push({ name: request.name, destination: destination.name, ...egressToPods(ref.namespace, spec.selector, ports) });
  }
  if (problem) return problem;
  return { type: "resolved", egress };
}
