import type { IJob } from "kubernetes-models/batch/v1/Job";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import type { KubeObject } from "../model.js";
import type { DeveloperWorkspaceSpec } from "../schema/developer-workspace.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { API_TOKEN_MOUNT, apiTokenVolume, hardenedContainerSecurityContext, hardenedPodSpec, SCRATCH_MOUNTS, SCRATCH_VOLUMES } from "./pod-security.js";
import { WORKSPACE_VOLUME, workspaceVolume } from "./storage.js";
import { caFile, caMount, caVolume, COLLECTOR_VOLUME, collectorContainer, VERIFICATION_RESULT } from "./evidence.js";
import { gatedServers, mcpServersEnv } from "./mcp-gate.js";
import { kube } from "./objects.js";
import { CHECKOUT_ENV, credentialVariable, RUNTIME_ENV, RUNTIME_PATHS } from "../../contracts/runtime-env.js";
import { runtimeLeaseEnv } from "./runtime-lease.js";
import { inferenceEnv } from "./inference.js";

type Runtime = WorkspaceProfileSpec["runtimes"][number];
type Credential = DeveloperWorkspaceSpec["credentials"][number];

export const WORKSPACE_DIR = RUNTIME_PATHS.workspace;
const CHECKOUT_DIR = RUNTIME_PATHS.checkout;

function credentialEnv(c: Credential, name: string): IEnvVar {
  return { name, valueFrom: { secretKeyRef: { name: c.secretRef.name, key: c.secretRef.key } } };
}


/**
 * The init container that checks out the source. It is the only container that ever
 * receives the Git credential; the runtime, which runs model-driven code, finds the files
 * already in place. With a private CA for the git destination, it trusts that CA alone.
 */
function checkoutContainer(spec: DeveloperWorkspaceSpec, p: NamespaceProfile): IContainer {
  const git = spec.credentials.find((c) => c.purpose === "git");
  const ca = gitCa(spec, p);
  return {
    name: "checkout",
    image: p.profile.checkout.image,
    env: [
      { name: CHECKOUT_ENV.repository, value: spec.source.repository },
      { name: CHECKOUT_ENV.revision, value: spec.source.revision },
      { name: CHECKOUT_ENV.checkoutDir, value: CHECKOUT_DIR },
      ...(git ? [credentialEnv(git, CHECKOUT_ENV.gitToken)] : []),
      ...(ca ? [{ name: CHECKOUT_ENV.caFile, value: caFile(ca) }, { name: CHECKOUT_ENV.gitCaFile, value: caFile(ca) }] : []),
    ],
    resources: { requests: p.resources, limits: p.resources },
    securityContext: hardenedContainerSecurityContext(),
    volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_DIR }, ...SCRATCH_MOUNTS, ...(ca ? [caMount(ca)] : [])],
  };
}

/** The private CA of the workspace's git destination, if it has one. */
const gitCa = (spec: DeveloperWorkspaceSpec, p: NamespaceProfile) => p.caBundles?.find((ca) => ca.destination === spec.capabilities.git?.destination);

function runtimeContainer(spec: DeveloperWorkspaceSpec, runtime: Runtime, p: NamespaceProfile): IContainer {
  const env: IEnvVar[] = [
    { name: RUNTIME_ENV.workspaceID, value: spec.workspaceID },
    { name: RUNTIME_ENV.workspaceDir, value: WORKSPACE_DIR },
    { name: "HOME", value: RUNTIME_PATHS.home },
  ];
  if (spec.model) env.push({ name: RUNTIME_ENV.model, value: spec.model.name });
  env.push(...inferenceEnv(p, spec.credentials));
  if (spec.task !== undefined) env.push({ name: RUNTIME_ENV.task, value: spec.task });
  if (spec.verification) env.push({ name: RUNTIME_ENV.verificationCommand, value: JSON.stringify(spec.verification.command) });
  // Where the runtime writes the verification's result, which the collector exports.
  if (spec.verification && p.evidence) env.push({ name: RUNTIME_ENV.verificationResult, value: VERIFICATION_RESULT });
  if (spec.lifecycle.idleTimeoutMinutes !== undefined) env.push({ name: RUNTIME_ENV.idleTimeoutMinutes, value: String(spec.lifecycle.idleTimeoutMinutes) });
  env.push(...mcpServersEnv(spec.capabilities.mcp, p), ...runtimeLeaseEnv(p));
  // A gated server is reached at the gate, whose credential for it the runtime never sees.
  const gated = new Set(gatedServers(p).map((s) => s.server));
  for (const c of spec.credentials) {
    if (c.purpose === "git" || c.purpose === "evidence" || (c.purpose === "mcp" && gated.has(c.name))) continue;
    env.push(credentialEnv(c, credentialVariable(c.purpose, c.name)));
  }
  return {
    name: "runtime",
    image: runtime.image,
    ...(runtime.command ? { command: runtime.command } : {}),
    ...(runtime.args ? { args: runtime.args } : {}),
    workingDir: CHECKOUT_DIR,
    env,
    resources: { requests: p.resources, limits: p.resources },
    securityContext: hardenedContainerSecurityContext(),
    volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_DIR }, ...SCRATCH_MOUNTS, ...(p.kubernetesAccess !== "none" ? [API_TOKEN_MOUNT] : [])],
  };
}

/**
 * The runtime workload: a Job that runs the agent (or a person's session) once. It is a Job
 * rather than a Deployment because a workspace has an end, and that end is its historical
 * outcome: a Job that completed or failed is not restarted behind the author's back.
 *
 * `retain` withholds the retention clean-up (ttlSecondsAfterFinished, which Kubernetes lets change
 * on an existing Job) while the run's evidence is not yet recorded: the TTL controller would
 * otherwise delete the pod, and with it an ephemeral workspace's files.
 */
export function renderWorkload(spec: DeveloperWorkspaceSpec, runtime: Runtime, p: NamespaceProfile, finished = false, retain = false): KubeObject {
  return kube<IJob>({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      backoffLimit: 0,
      completions: 1,
      parallelism: 1,
      // A finished Job is kept suspended: if it is deleted (by hand or by its TTL) while a
      // reconcile that still saw it is in flight, Crossplane re-creates it from this desired
      // state, and a suspended Job starts no pod, so the agent does not run a second time.
      ...(finished ? { suspend: true } : {}),
      ...(spec.lifecycle.retentionMinutes !== undefined && !retain ? { ttlSecondsAfterFinished: spec.lifecycle.retentionMinutes * 60 } : {}),
      template: {
        metadata: { labels: p.labels },
        spec: {
          ...hardenedPodSpec(p),
          restartPolicy: "Never",
          // The collector's bound: how long it keeps serving the evidence after the runtime ends.
          ...(p.evidence ? { terminationGracePeriodSeconds: p.evidence.collectTimeoutSeconds } : {}),
          initContainers: [checkoutContainer(spec, p), ...(p.evidence ? [collectorContainer(p.evidence)] : [])],
          containers: [runtimeContainer(spec, runtime, p)],
          volumes: [
            workspaceVolume(p),
            ...SCRATCH_VOLUMES,
            ...(p.kubernetesAccess !== "none" ? [apiTokenVolume()] : []),
            ...(gitCa(spec, p) ? [caVolume(gitCa(spec, p)!)] : []),
            ...(p.evidence ? [COLLECTOR_VOLUME] : []),
          ],
        },
      },
    },
  });
}
