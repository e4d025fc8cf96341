import type { Problem } from "../problems.js";
import type { ResolvedProfile } from "./profile.js";
import type { Destination } from "../schema/profile.js";

/**
 * The names a reviewed destination answers for: those the profile lists, and for an in-cluster
 * Service the names cluster DNS gives it.
 */
function destinationHosts(d: Destination): string[] {
  const service = d.service ? [`${d.service.name}.${d.service.namespace}.svc`, `${d.service.name}.${d.service.namespace}.svc.cluster.local`] : [];
  return [...(d.hosts ?? []), ...service].map((h) => h.toLowerCase());
}

/**
 * The checkout presents the git credential to the repository's host, and the workspace's pod may
 * reach every destination the workspace declares (a NetworkPolicy selects pods, not containers),
 * so a repository on the inference gateway's host would hand it the token. With a git credential,
 * the repository's host must be one the profile reviews for the git destination.
 */
export function checkoutHostProblem(
  spec: { source: { repository: string }; capabilities: { git?: { destination: string } | undefined }; credentials: readonly { purpose: string }[] },
  profile: ResolvedProfile,
): Problem | undefined {
  const git = spec.capabilities.git;
  if (git === undefined || !spec.credentials.some((c) => c.purpose === "git")) return undefined;
  const index = profile.spec.destinations.findIndex((d) => d.name === git.destination);
  // A destination the profile does not review is refused with the egress, naming the field.
  if (index < 0) return undefined;
  const hosts = destinationHosts(profile.spec.destinations[index]!);
  if (hosts.length === 0) {
    return { type: "invalid", message: `spec.source.repository: WorkspaceProfile "${profile.name}" lists no hosts for destination "${git.destination}", so the git credential cannot be bound to one (spec.destinations[].hosts)` };
  }
  const host = new URL(spec.source.repository).hostname.toLowerCase();
  if (hosts.includes(host)) return undefined;
  return {
    type: "invalid",
    message: `spec.source.repository: host "${host}" is not a host WorkspaceProfile "${profile.name}" reviews for destination "${git.destination}" (${hosts.join(", ")}), and the checkout would present the git credential to it`,
  };
}
