// The evidence export resolved from the profile: its registry as an egress request, its CA bundles,
// and the export as the workspace will run it.
import type { CapabilityRequest } from "./egress.js";
import type { Problem } from "../problems.js";
import type { RequiredResources } from "./required.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import type { CaBundle, Egress, EvidenceExport } from "../workspace.js";

/**
 * The evidence registry as an egress request, for the export alone. Refused when the profile has
 * no evidence registry, or when the workspace declares a capability to it: the runtime must not
 * reach where its evidence is kept.
 */
export function evidenceRequest(
  exportBeforeCleanup: boolean,
  capabilities: readonly CapabilityRequest[],
  profile: { name: string; spec: WorkspaceProfileSpec },
): { type: "none" } | { type: "request"; request: CapabilityRequest } | Problem {
  if (!exportBeforeCleanup) return { type: "none" };
  const evidence = profile.spec.evidence;
  if (evidence === undefined) {
    return {
      type: "invalid",
      message: `spec.lifecycle.evidence.exportBeforeCleanup: WorkspaceProfile "${profile.name}" has no spec.evidence, so the evidence could not be exported; ask the platform team for an evidence registry`,
    };
  }
  const reaching = capabilities.find((c) => c.destination === evidence.destination);
  if (reaching !== undefined) {
    return {
      type: "invalid",
      message: `${reaching.field}.destination: "${evidence.destination}" is WorkspaceProfile "${profile.name}"'s evidence registry, which only the evidence export may reach`,
    };
  }
  return { type: "request", request: { name: "evidence", field: `WorkspaceProfile "${profile.name}" spec.evidence`, destination: evidence.destination } };
}

/**
 * The private CAs of the destinations a workspace's containers talk TLS to (its git destination,
 * its evidence registry), read from the ConfigMaps the profile names. Every ConfigMap is asked
 * for before any problem is reported, so that Crossplane fetches them in one round.
 */
export function resolveCaBundles(destinations: readonly (string | undefined)[], profile: { name: string; spec: WorkspaceProfileSpec }, required: RequiredResources): { type: "resolved"; bundles: CaBundle[] } | Problem {
  const bundles: CaBundle[] = [];
  let problem: Problem | undefined;
  for (const name of new Set(destinations)) {
    const index = profile.spec.destinations.findIndex((d) => d.name === name);
    const ref = profile.spec.destinations[index]?.caBundle;
    if (ref === undefined) continue;
    const field = `WorkspaceProfile "${profile.name}" spec.destinations[${index}].caBundle`;
    const found = required.need(`ca-bundle-${name}`, { apiVersion: "v1", kind: "ConfigMap", namespace: ref.namespace, name: ref.name }, "CaBundle", field);
    if (found.type !== "found") {
      problem ??= found;
      continue;
    }
    const pem = ((found.object.data ?? {}) as Record<string, string>)[ref.key];
    if (pem === undefined || !pem.includes("-----BEGIN CERTIFICATE-----")) {
      problem ??= { type: "invalid", message: `${field}: ConfigMap "${ref.namespace}/${ref.name}" has no PEM certificate under key "${ref.key}"` };
      continue;
    }
    bundles.push({ destination: name!, configMap: `ca-${name}`, pem });
  }
  return problem ?? { type: "resolved", bundles };
}

/** The MCP servers only the gate reaches: it talks TLS to an https one. */
export function gatedDestinations(requests: readonly CapabilityRequest[]): string[] {
  return requests.filter((r) => r.gate !== undefined).map((r) => r.destination);
}

/**
 * The destinations whose TLS a DeveloperWorkspace's own containers check, among its requests:
 * git's (the checkout), the evidence registry (the export) and gated MCP servers (the gate). The
 * runtime's TLS trust is its image's.
 */
export function tlsDestinations(requests: readonly CapabilityRequest[]): string[] {
  return [...requests.filter((r) => r.name === "git" || r.name === "evidence").map((r) => r.destination), ...gatedDestinations(requests)];
}

/** The export as the profile's spec.evidence, the resolved registry opening and the workspace's credential and CA make it. */
export function evidenceExportOf(
  profile: WorkspaceProfileSpec,
  registry: Egress | undefined,
  spec: { workspaceID: string; credentials: readonly { purpose: string; secretRef: { name: string; key: string } }[] },
  caBundles: readonly CaBundle[],
): EvidenceExport | undefined {
  const evidence = profile.evidence;
  if (registry === undefined || evidence === undefined) return undefined;
  const credential = spec.credentials.find((c) => c.purpose === "evidence")?.secretRef;
  const caBundle = caBundles.find((b) => b.destination === registry.destination);
  const hosts = profile.destinations.find((d) => d.name === evidence.destination)?.hosts ?? [];
  return {
    image: evidence.image,
    repository: evidence.repository,
    tag: spec.workspaceID,
    resources: evidence.resources,
    collectTimeoutSeconds: evidence.collectTimeoutSeconds,
    egress: registry,
    ...(credential ? { credential } : {}),
    ...(caBundle ? { caBundle } : {}),
    ...(hosts.length > 0 ? { tokenRealmHosts: hosts } : {}),
  };
}
