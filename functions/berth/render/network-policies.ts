import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort";
import type { KubeObject } from "../model.js";
import type { Egress, NamespaceProfile } from "../workspace.js";
import { EVIDENCE_EXPORT_NAME, EVIDENCE_PORT, evidenceExportPods, workloadPods } from "./evidence.js";
import { COMPONENT_LABEL } from "./labels.js";
import { gatedServers, MCP_GATE_PORT, mcpGatePods } from "./mcp-gate.js";
import { kube } from "./objects.js";

type Protocol = "TCP" | "UDP" | "SCTP";

/** Egress to IP blocks the profile reviewed. */
export function egressToCidrs(cidrs: readonly string[], ports: readonly { port: number; protocol: Protocol }[]): Pick<Egress, "to" | "ports"> {
  return {
    to: cidrs.map((cidr) => ({ ipBlock: { cidr } })),
    ports: ports.map(({ port, protocol }) => ({ port, protocol })),
  };
}

/** Egress to the pods behind an in-cluster Service, in the Service's own namespace only. */
export function egressToPods(namespace: string, podSelector: Record<string, string>, ports: readonly INetworkPolicyPort[]): Pick<Egress, "to" | "ports"> {
  return {
    to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } }, podSelector: { matchLabels: podSelector } }],
    ports: [...ports],
  };
}

function policy(p: NamespaceProfile, name: string, spec: INetworkPolicy["spec"], annotations?: Record<string, string>): KubeObject {
  return kube<INetworkPolicy>({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: p.namespace, labels: p.labels, ...(annotations ? { annotations } : {}) },
    spec,
  });
}

/**
 * Default deny in both directions, then DNS, then exactly one policy per declared capability
 * (for an MCP server whose tools are declared, one for the MCP gate alone: render/mcp-gate.ts),
 * and with a gate, the two that let the workspace's pods, and only they, reach it.
 * Policies only ever add allowances, so a workspace's egress is the union of what its own
 * capabilities opened: nothing it did not declare, nothing the profile did not review.
 */
export function renderNetworkPolicies(p: NamespaceProfile): Record<string, KubeObject> {
  const policies: Record<string, KubeObject> = {
    "network-policy-default-deny": policy(p, "default-deny", { podSelector: {}, policyTypes: ["Ingress", "Egress"] }),
    "network-policy-dns": policy(p, "allow-dns", {
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [
        {
          to: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": p.profile.dns.namespace } },
              podSelector: { matchLabels: p.profile.dns.podSelector },
            },
          ],
          ports: [
            { port: 53, protocol: "UDP" },
            { port: 53, protocol: "TCP" },
          ],
        },
      ],
    }),
  };
  // The evidence export reaches its registry and nothing the workspace declared.
  const declaring = p.evidence ? { matchExpressions: [{ key: COMPONENT_LABEL, operator: "NotIn", values: [EVIDENCE_EXPORT_NAME] }] } : {};
  for (const egress of p.egress) {
    // A gated MCP server is the gate's to reach: the runtime gets the gate instead.
    const from = egress.gate ? { matchLabels: mcpGatePods(p) } : declaring;
    policies[`network-policy-egress-${egress.name}`] = policy(
      p,
      `egress-${egress.name}`,
      { podSelector: from, policyTypes: ["Egress"], egress: [{ to: egress.to, ports: egress.ports }] },
      { "workspaces.berth.dev/destination": egress.destination },
    );
  }
  if (gatedServers(p).length > 0) {
    // The workspace's pods may call its MCP gate, and the gate accepts calls from them alone.
    const gate = { podSelector: { matchLabels: mcpGatePods(p) } };
    const port = [{ port: MCP_GATE_PORT, protocol: "TCP" as const }];
    policies["network-policy-mcp-gate"] = policy(p, "mcp-gate", { podSelector: declaring, policyTypes: ["Egress"], egress: [{ to: [gate], ports: port }] });
    policies["network-policy-mcp-gate-ingress"] = policy(p, "mcp-gate-ingress", { ...gate, policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: {} }], ports: port }] });
  }
  if (p.evidence) {
    // The export alone reaches the evidence registry, and fetches from the collector beside the
    // runtime, which accepts the export alone.
    const exporter = { podSelector: { matchLabels: evidenceExportPods(p) } };
    const workload = { podSelector: { matchLabels: workloadPods() } };
    const port = [{ port: EVIDENCE_PORT, protocol: "TCP" as const }];
    const registry = p.evidence.egress;
    policies["network-policy-evidence-export"] = policy(
      p,
      "evidence-export",
      { ...exporter, policyTypes: ["Egress"], egress: [{ to: registry.to, ports: registry.ports }] },
      { "workspaces.berth.dev/destination": registry.destination },
    );
    policies["network-policy-evidence-collect"] = policy(p, "evidence-collect", { ...exporter, policyTypes: ["Egress"], egress: [{ to: [workload], ports: port }] });
    policies["network-policy-evidence-collect-ingress"] = policy(p, "evidence-collect-ingress", { ...workload, policyTypes: ["Ingress"], ingress: [{ from: [exporter], ports: port }] });
  }
  return policies;
}
