import { BlockList, isIPv6 } from "node:net";
import type { INetworkPolicyPeer } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer";
import type { INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort";
import type { Problem } from "../problems.js";
import { describeRequirement, type RequiredResources } from "./required.js";
import { egressToCidrs, egressToPods } from "../render/network-policies.js";
import type { Capabilities } from "../schema/capabilities.js";
import type { Destination, WorkspaceProfileSpec } from "../schema/profile.js";
import type { Egress, InferenceEndpoint } from "../workspace.js";

/** A declared capability that needs egress, with the field that declared it. */
export interface CapabilityRequest {
  /** Policy name suffix: `git`, `inference`, `mcp-<name>`, `registry-<destination>`, `kubernetes`. */
  name: string;
  /** Where it was declared, for error messages: `spec.capabilities.mcp[1]`. */
  field: string;
  destination: string;
  /** An MCP capability that declared its tools: only the MCP gate reaches it. */
  gate?: { server: string; tools: readonly string[]; credential?: { name: string; key: string } };
}

/** A credential the workspace declared, as far as egress needs it. */
type Credential = { name: string; purpose: string; secretRef: { name: string; key: string } };

/**
 * Every capability in a document that opens egress, in a stable order. An MCP capability that
 * declares tools is gated, and an `mcp` credential of the same name goes with it to the gate.
 */
export function declaredCapabilities(c: Capabilities, field = "spec.capabilities", credentials: readonly Credential[] = []): CapabilityRequest[] {
  const requests: CapabilityRequest[] = [];
  if (c.git) requests.push({ name: "git", field: `${field}.git`, destination: c.git.destination });
  if (c.inference) requests.push({ name: "inference", field: `${field}.inference`, destination: c.inference.destination });
  c.mcp.forEach((m, i) => {
    const credential = credentials.find((k) => k.purpose === "mcp" && k.name === m.name)?.secretRef;
    const gate = m.tools === undefined ? undefined : { server: m.name, tools: m.tools, ...(credential ? { credential } : {}) };
    requests.push({ name: `mcp-${m.name}`, field: `${field}.mcp[${i}]`, destination: m.destination, ...(gate ? { gate } : {}) });
  });
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
    if (request.gate !== undefined && profile.spec.mcpGate === undefined) {
      problem ??= {
        type: "invalid",
        message: `${request.field}.tools: WorkspaceProfile "${profile.name}" has no spec.mcpGate, so declared tools could not be enforced; omit tools to reach the whole server, or ask the platform team for a gate`,
      };
      continue;
    }
    if (destination.cidrs !== undefined) {
      const opening = { name: request.name, destination: destination.name, ...egressToCidrs(destination.cidrs, destination.ports ?? []) };
      const address = singleAddress(destination.cidrs);
      if (request.name === "inference") {
        const endpoint = inferenceEndpoint(request, destination, profile.name, destination.hosts?.[0] ?? address, destination.ports![0]!.port);
        if (typeof endpoint === "object" && "type" in endpoint) problem ??= endpoint;
        else egress.push({ ...opening, ...(endpoint ? { inference: endpoint } : {}) });
        continue;
      }
      if (request.gate === undefined) {
        egress.push(opening);
        continue;
      }
      if (address === undefined) {
        problem ??= {
          type: "invalid",
          message: `${request.field}.destination: reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}" must be one address (a /32 or /128 cidr) for the MCP gate to reach its server`,
        };
        continue;
      }
      egress.push({ ...opening, gate: { ...request.gate, upstream: mcpUrl(destination, address, destination.ports![0]!.port) } });
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
    // NetworkPolicy reads an egress rule without ports as every port: a headless Service that
    // names none would open every port of its pods.
    if ((spec.ports ?? []).length === 0) {
      problem ??= {
        type: "invalid",
        message: `reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}": ${describeRequirement(requirement)} has no ports, and an egress rule without ports allows every port; give the Service its ports, or review the destination as cidrs and ports`,
      };
      continue;
    }
    const ports: INetworkPolicyPort[] = (spec.ports ?? []).map((p) => ({
      port: p.targetPort ?? p.port,
      protocol: (p.protocol ?? "TCP") as INetworkPolicyPort["protocol"],
    }));
    const opening = { name: request.name, destination: destination.name, ...egressToPods(ref.namespace, spec.selector, ports) };
    const servicePort = spec.ports?.[0]?.port;
    if (request.name === "inference" && destination.inference !== undefined) {
      const endpoint = servicePort === undefined ? undefined : inferenceEndpoint(request, destination, profile.name, destination.hosts?.[0] ?? `${ref.name}.${ref.namespace}.svc`, servicePort);
      if (endpoint === undefined) problem ??= { type: "invalid", message: `reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}": ${describeRequirement(requirement)} has no port for the runtime to call its model service on` };
      else if ("type" in endpoint) problem ??= endpoint;
      else egress.push({ ...opening, inference: endpoint });
      continue;
    }
    if (request.gate === undefined) {
      egress.push(opening);
      continue;
    }
    if (servicePort === undefined) {
      problem ??= { type: "invalid", message: `reviewed destination "${destination.name}" of WorkspaceProfile "${profile.name}": ${describeRequirement(requirement)} has no port for the MCP gate to reach` };
      continue;
    }
    egress.push({ ...opening, gate: { ...request.gate, upstream: mcpUrl(destination, `${ref.name}.${ref.namespace}.svc`, servicePort) } });
  }
  problem ??= sideDoor(requests, egress);
  if (problem) return problem;
  return { type: "resolved", egress };
}

/**
 * A destination whose tools the workspace declares is reached through the MCP gate alone; an
 * opening of the runtime's own to the same server would be a door beside the gate. So no other,
 * ungated capability may name that destination, nor one whose reviewed blocks and ports take in
 * its address, nor one selecting the same pods. (A destination reviewed twice under two names is
 * caught the same way.)
 */
function sideDoor(requests: readonly CapabilityRequest[], egress: readonly Egress[]): Problem | undefined {
  const fieldOf = new Map(requests.map((r) => [r.name, r.field]));
  for (const gated of egress.filter((e) => e.gate)) {
    for (const open of egress.filter((e) => !e.gate)) {
      if (open.destination !== gated.destination && !overlaps(open, gated)) continue;
      const reaches = open.destination === gated.destination ? `"${gated.destination}"` : `"${open.destination}" reaches the server of "${gated.destination}", which`;
      return {
        type: "invalid",
        message: `${fieldOf.get(open.name)}.destination: ${reaches} is reached only through the MCP gate (${fieldOf.get(gated.name)} declares its tools), so nothing reaches it directly; declare the tools here too, or remove one of them`,
      };
    }
  }
  return undefined;
}

/** Whether two openings let traffic to a common address and port. */
function overlaps(a: Pick<Egress, "to" | "ports">, b: Pick<Egress, "to" | "ports">): boolean {
  const samePort = a.ports.some((p) => b.ports.some((q) => p.port === q.port && (p.protocol ?? "TCP") === (q.protocol ?? "TCP")));
  return samePort && a.to.some((x) => b.to.some((y) => samePeer(x, y)));
}

function samePeer(x: INetworkPolicyPeer, y: INetworkPolicyPeer): boolean {
  if (x.ipBlock && y.ipBlock) return blocksOverlap(x.ipBlock.cidr, y.ipBlock.cidr);
  return x.ipBlock === undefined && y.ipBlock === undefined && JSON.stringify([x.namespaceSelector, x.podSelector]) === JSON.stringify([y.namespaceSelector, y.podSelector]);
}

/** CIDR blocks either nest or are apart: they overlap when one holds the other's first address. */
function blocksOverlap(a: string, b: string): boolean {
  const holds = (outer: string, inner: string) => {
    const [network, bits] = outer.split("/");
    const family = isIPv6(network!) ? "ipv6" : "ipv4";
    if (isIPv6(inner.split("/")[0]!) !== (family === "ipv6")) return false;
    const list = new BlockList();
    list.addSubnet(network!, Number(bits ?? (family === "ipv6" ? 128 : 32)), family);
    return list.check(inner.split("/")[0]!, family);
  };
  return holds(a, b) || holds(b, a);
}

/** The one address of cidrs that name a single host, or undefined. */
function singleAddress(cidrs: readonly string[]): string | undefined {
  if (cidrs.length !== 1) return undefined;
  const [address, bits] = cidrs[0]!.split("/");
  const single = address!.includes(":") ? "128" : "32";
  if (bits !== undefined && bits !== single) return undefined;
  return address!.includes(":") ? `[${address}]` : address;
}

/**
 * The model service behind the inference destination, as the runtime calls it; undefined when
 * the destination does not say where it answers (the runtime then has egress to it, and no URL).
 */
function inferenceEndpoint(request: CapabilityRequest, destination: Destination, profile: string, host: string | undefined, port: number): InferenceEndpoint | Problem | undefined {
  if (destination.inference === undefined) return undefined;
  if (host === undefined) {
    return {
      type: "invalid",
      message: `${request.field}.destination: reviewed destination "${destination.name}" of WorkspaceProfile "${profile}" must list hosts or be one address (a /32 or /128 cidr) for the runtime to be told where its model service answers`,
    };
  }
  return { url: endpointUrl(destination.inference, host, port), api: destination.inference.api };
}

/** The MCP endpoint behind a reviewed destination, as the gate dials it. */
function mcpUrl(destination: Destination, host: string, port: number): string {
  return endpointUrl(destination.mcp ?? { scheme: "http", path: "/mcp" }, host, port);
}

/** An HTTP service's URL from a destination's host and port and its endpoint's scheme and path. */
function endpointUrl({ scheme, path }: { scheme: string; path: string }, host: string, port: number): string {
  return `${scheme}://${host}:${port}${path}`;
}
