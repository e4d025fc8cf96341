import type { INetworkPolicyPeer } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer";
import type { INetworkPolicyPort } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort";
import type { WorkspaceProfileSpec } from "./schema/profile.js";

/**
 * A workspace as Berth resolved it from its documents, before anything is rendered. The modules
 * that resolve these (execution-class.ts, egress.ts, kinds/) and those that render or report
 * them (render/, conditions.ts) all import them from here, so this module imports none of them:
 * a type defined beside its renderer or resolver made the modules import one another in a
 * circle (test/unit/import-cycles.test.ts keeps them from doing so again).
 */

/** A class as a workspace binds to it: what it says, and which version of it. */
export interface Binding {
  name: string;
  uid?: string;
  generation?: number;
  classHash: string;
}

/**
 * An MCP server whose tools the workspace declared: reached only by the workspace's MCP gate,
 * which offers and forwards only those tools.
 */
export interface GatedMcpServer {
  /** The capability's name; the gate serves it at `/mcp/<server>`. */
  server: string;
  /** Where the gate reaches it, from the reviewed destination. */
  upstream: string;
  tools: readonly string[];
  /** The workspace's `mcp` credential of the same name: delivered to the gate, never to the runtime. */
  credential?: { name: string; key: string };
}

/** One reviewed egress opening: where to, on which ports, for which declared capability. */
export interface Egress {
  /** Name suffix of the policy and its composition resource: `git`, `mcp-docs`, … */
  name: string;
  /** The reviewed destination it resolves to, for the policy's annotation. */
  destination: string;
  to: INetworkPolicyPeer[];
  ports: INetworkPolicyPort[];
  /** Set when only the MCP gate may use this opening. */
  gate?: GatedMcpServer;
  /** The inference opening's model service, when its destination says where it answers. */
  inference?: InferenceEndpoint;
}

/** Where the runtime finds the model: the URL it calls and the API spoken there. */
export interface InferenceEndpoint {
  url: string;
  api: "openai";
}

/** A private CA a destination's TLS chains to, copied into the workspace as ConfigMap `configMap`. */
export interface CaBundle {
  destination: string;
  configMap: string;
  pem: string;
}

/**
 * The export of a DeveloperWorkspace's evidence (lifecycle.evidence.exportBeforeCleanup), as
 * resolved from the profile's spec.evidence: a collector beside the runtime, and an export pod
 * that alone reaches the registry and holds its credential.
 */
export interface EvidenceExport {
  image: string;
  repository: string;
  tag: string;
  resources: { cpu: string; memory: string };
  collectTimeoutSeconds: number;
  /** The opening to the registry's reviewed destination, for the export's pods alone. */
  egress: Pick<Egress, "destination" | "to" | "ports">;
  /** The workspace's `evidence` credential (a Docker config JSON), for the export alone. */
  credential?: { name: string; key: string };
  caBundle?: CaBundle;
  /**
   * The evidence destination's hosts: besides the registry's own host, where a token service may
   * be sent the credential. Unset when the profile lists none.
   */
  tokenRealmHosts?: string[];
}

/**
 * The Namespace profile: the first isolation profile of the Developer Workspace contract,
 * shared by every kind of workspace. Everything here is already resolved and validated.
 */
export interface NamespaceProfile {
  workspaceID: string;
  namespace: string;
  labels: Record<string, string>;
  profile: WorkspaceProfileSpec;
  resources: { cpu: string; memory: string };
  volume: {
    mode: "persistent" | "ephemeral";
    size: string;
    /** A snapshot the volume is restored from, when it starts from a checkpoint. */
    dataSource?: { apiGroup: string; kind: string; name: string };
  };
  egress: readonly Egress[];
  kubernetesAccess: "none" | "read" | "edit";
  /**
   * With access edit, the CPU and memory the pods the runtime makes may use between them, on top
   * of the workspace's own resources; the quota holds the sum.
   */
  runtimeMade?: { cpu: string; memory: string };
  /**
   * The RuntimeClass the workspace's runtime runs with. The Namespace names it, and admission
   * requires it of every pod the runtime makes (admission/policies.yaml, berth-workspace-runtime).
   */
  runtimeClassName?: string;
  /** Set when the profile declares runtime-enforced capacity: Pods there need `hostUsers: false`. */
  userNamespacesRequired: boolean;
  /** Private CAs of the destinations the workspace's containers talk TLS to. */
  caBundles?: readonly CaBundle[];
  /** Set when the workspace's evidence is exported before clean-up. */
  evidence?: EvidenceExport;
}
