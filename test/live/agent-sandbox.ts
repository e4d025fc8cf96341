// The agent-sandbox controller on the live cluster, run as its release runs it: the release's own
// manifests (k8s/rbac.generated.yaml: the ClusterRole; k8s/controller.yaml: its Namespace,
// ServiceAccount, binding and Deployment) from the module build.sh built the binary from, with
// only the Deployment's image set to one made here from that binary (the release's is a `ko://`
// placeholder its deploy scripts replace). So ExecutionWorkspaces on the agent-sandbox class meet
// the real controller: it makes the pod from the Sandbox's podTemplate, deletes it on suspend and
// writes the Sandbox's conditions.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { accountFiles, type ImageSpec } from "../../image/oci.js";
import { readVersions } from "../conformance/controlplane/controlplane.js";
import { type Cluster, load, type Obj, waitFor } from "../conformance/setup.js";
import { NONROOT } from "./images.js";

export const AGENT_SANDBOX_VERSION = readVersions().AGENT_SANDBOX_VERSION!;
export const AGENT_SANDBOX_NAMESPACE = "agent-sandbox-system";
const DEPLOYMENT = "agent-sandbox-controller";
export const AGENT_SANDBOX_IMAGE = `berth.local/live/agent-sandbox-controller:v${AGENT_SANDBOX_VERSION}`;

/** The controller's image: its static binary as ENTRYPOINT, as the nonroot user, nothing else. */
export function agentSandboxImageSpec(nodeBin: string): ImageSpec {
  const binary = join(nodeBin, `agent-sandbox-controller-${AGENT_SANDBOX_VERSION}`);
  if (!existsSync(binary)) throw new Error(`${binary} is missing; run test/conformance/controlplane/build.sh --node`);
  return {
    name: AGENT_SANDBOX_IMAGE,
    layers: [
      {
        files: [
          { path: "/agent-sandbox-controller", content: readFileSync(binary), mode: 0o755 },
          ...accountFiles([{ name: "nonroot", uid: NONROOT, gid: NONROOT, home: "/home/nonroot" }]),
        ],
      },
    ],
    config: { User: `${NONROOT}:${NONROOT}`, Entrypoint: ["/agent-sandbox-controller"] },
  };
}

/** The release's manifests, its Deployment running AGENT_SANDBOX_IMAGE from the node's images. */
export function agentSandboxManifests(nodeBin: string): Obj[] {
  const dir = join(nodeBin, `agent-sandbox-${AGENT_SANDBOX_VERSION}`);
  const objects = [...load(join(dir, "rbac.generated.yaml")), ...load(join(dir, "controller.yaml"))];
  const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === DEPLOYMENT);
  const container = deployment?.spec?.template?.spec?.containers?.[0];
  if (!container) throw new Error(`${dir}/controller.yaml: no Deployment ${DEPLOYMENT} with a container`);
  container.image = AGENT_SANDBOX_IMAGE;
  container.imagePullPolicy = "Never";
  return objects;
}

/** Applies the release's manifests and waits until the controller's pod is ready. */
export async function installAgentSandbox(cluster: Cluster, nodeBin: string): Promise<void> {
  for (const o of agentSandboxManifests(nodeBin)) await cluster.apply(o);
  await waitFor(
    `the agent-sandbox controller ${AGENT_SANDBOX_VERSION} ready`,
    async () => ((await cluster.get("apps/v1", "Deployment", DEPLOYMENT, AGENT_SANDBOX_NAMESPACE))?.status?.readyReplicas ?? 0) >= 1,
    120_000,
  );
}
