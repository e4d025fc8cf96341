import type { IDeployment } from "kubernetes-models/apps/v1/Deployment";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IService } from "kubernetes-models/v1/Service";
import { specHash } from "../hash.js";
import type { Policy } from "../../contracts/mcp-gate-policy.js";
import type { KubeObject } from "../model.js";
import type { GatedMcpServer, NamespaceProfile } from "../workspace.js";
import { COMPONENT_LABEL } from "./labels.js";
import { hardenedContainerSecurityContext, hardenedPodSpec } from "./pod-security.js";
import { kube } from "./objects.js";
import { RUNTIME_ENV } from "../../contracts/runtime-env.js";

// The MCP gate: one pod per workspace that declares MCP tools, the only pod there that reaches
// those MCP servers. It is a separate pod, not a container beside the runtime, because a
// NetworkPolicy selects pods: a container sharing the runtime's pod would share its egress too.

export const MCP_GATE_NAME = "mcp-gate";
export const MCP_GATE_PORT = 8080;
const POLICY_DIR = "/etc/berth/mcp-gate";
const POLICY_FILE = "policy.json";
/** The gated servers' private CAs, one file (admission keeps ConfigMaps `ca-*` Crossplane's; no destination is named "-mcp-gate"). */
const GATE_CA = "ca--mcp-gate";
const GATE_CA_DIR = "/etc/berth/ca/mcp-gate";

/** The gate's pods, and only they. */
export const mcpGatePods = (p: NamespaceProfile): Record<string, string> => ({ ...p.labels, [COMPONENT_LABEL]: MCP_GATE_NAME });

/** Every declared MCP server that only the gate reaches. */
export function gatedServers(p: NamespaceProfile): GatedMcpServer[] {
  return p.egress.flatMap((e) => (e.gate ? [e.gate] : []));
}

/** The gate's CPU and memory when the workspace has a gate: the quota and LimitRange make room for them. */
export function gateResources(p: NamespaceProfile): { cpu: string; memory: string } | undefined {
  return gatedServers(p).length > 0 ? p.profile.mcpGate?.resources : undefined;
}

/** Where the runtime finds a gated server: the gate's Service, in the workspace's Namespace. */
export function gatedServerUrl(server: string): string {
  return `http://${MCP_GATE_NAME}:${MCP_GATE_PORT}/mcp/${server}`;
}

/**
 * `BERTH_MCP_SERVERS` for the runtime: each declared MCP server with its tools, and for a gated
 * one the gate's URL, the only way there. None when nothing is declared.
 */
export function mcpServersEnv(mcp: readonly { name: string; tools?: readonly string[] | undefined }[], p: NamespaceProfile): { name: string; value: string }[] {
  if (mcp.length === 0) return [];
  const gated = new Set(gatedServers(p).map((s) => s.server));
  const servers = mcp.map(({ name, tools }) => ({ name, tools: tools ?? [], ...(gated.has(name) ? { url: gatedServerUrl(name) } : {}) }));
  return [{ name: RUNTIME_ENV.mcpServers, value: JSON.stringify(servers) }];
}

const credentialEnv = (server: string) => `BERTH_MCP_${server.toUpperCase().replace(/-/g, "_")}`;

/** The gate's policy file, as functions/contracts/mcp-gate-policy.ts defines it and the gate reads it: one line of JSON. */
export function mcpGatePolicy(servers: readonly GatedMcpServer[]): string {
  const policy: Policy = {
    servers: servers.map((s) => ({
      name: s.server,
      upstream: s.upstream,
      tools: [...s.tools],
      ...(s.credential ? { credentialEnv: credentialEnv(s.server) } : {}),
    })),
  };
  return JSON.stringify(policy);
}

/**
 * The gate's objects, none when no MCP server is gated: its policy (a ConfigMap Crossplane keeps
 * as rendered, so a GitOps change of the tool list is what changes the policy, and an edit in
 * the cluster is reverted), the Deployment that runs it and the Service the runtime calls. The
 * policies that let the workspace's pods reach it are with the others (network-policies.ts).
 */
export function renderMcpGate(p: NamespaceProfile): Record<string, KubeObject> {
  const servers = gatedServers(p);
  const gate = p.profile.mcpGate;
  if (servers.length === 0 || gate === undefined) return {};
  const policy = mcpGatePolicy(servers);
  const pods = mcpGatePods(p);
  const metadata = { name: MCP_GATE_NAME, namespace: p.namespace, labels: p.labels };
  // The private CAs of the gated servers, in one file the gate's Node.js adds to its roots.
  const gatedCas = p.egress.filter((e) => e.gate).flatMap((e) => p.caBundles?.filter((ca) => ca.destination === e.destination) ?? []);
  const caPem = gatedCas.map((ca) => ca.pem.trimEnd() + "\n").join("");
  return {
    "mcp-gate-policy": kube<IConfigMap>({ apiVersion: "v1", kind: "ConfigMap", metadata, data: { [POLICY_FILE]: policy } }),
    ...(caPem ? { "mcp-gate-ca": kube<IConfigMap>({ apiVersion: "v1", kind: "ConfigMap", metadata: { ...metadata, name: GATE_CA }, data: { "ca.crt": caPem } }) } : {}),
    "mcp-gate": kube<IDeployment>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata,
      spec: {
        replicas: 1,
        selector: { matchLabels: pods },
        template: {
          // A new policy (or CA) rolls the pod: the gate reads them once, at start.
          metadata: { labels: pods, annotations: { "workspaces.berth.dev/mcp-gate-policy": specHash(caPem ? policy + caPem : policy) } },
          spec: {
            ...hardenedPodSpec(p),
            containers: [
              {
                name: "gate",
                image: gate.image,
                args: ["--policy", `${POLICY_DIR}/${POLICY_FILE}`, "--listen", `0.0.0.0:${MCP_GATE_PORT}`],
                ports: [{ name: "mcp", containerPort: MCP_GATE_PORT, protocol: "TCP" }],
                env: [
                  ...servers.flatMap((s) => (s.credential ? [{ name: credentialEnv(s.server), valueFrom: { secretKeyRef: { name: s.credential.name, key: s.credential.key } } }] : [])),
                  ...(caPem ? [{ name: "NODE_EXTRA_CA_CERTS", value: `${GATE_CA_DIR}/ca.crt` }] : []),
                ],
                readinessProbe: { httpGet: { path: "/healthz", port: MCP_GATE_PORT }, periodSeconds: 2 },
                resources: { requests: gate.resources, limits: gate.resources },
                securityContext: hardenedContainerSecurityContext(),
                volumeMounts: [{ name: "policy", mountPath: POLICY_DIR, readOnly: true }, ...(caPem ? [{ name: "ca", mountPath: GATE_CA_DIR, readOnly: true }] : [])],
              },
            ],
            volumes: [{ name: "policy", configMap: { name: MCP_GATE_NAME } }, ...(caPem ? [{ name: "ca", configMap: { name: GATE_CA } }] : [])],
          },
        },
      },
    }),
    "mcp-gate-service": kube<IService>({
      apiVersion: "v1",
      kind: "Service",
      metadata,
      spec: { selector: pods, ports: [{ name: "mcp", port: MCP_GATE_PORT, targetPort: MCP_GATE_PORT, protocol: "TCP" }] },
    }),
  };
}
