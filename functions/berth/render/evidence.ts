import type { IJob } from "kubernetes-models/batch/v1/Job";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import type { IVolume } from "kubernetes-models/v1/Volume";
import type { IVolumeMount } from "kubernetes-models/v1/VolumeMount";
import type { KubeObject } from "../model.js";
import type { Outcome } from "../observe/outcome.js";
import type { CaBundle, EvidenceExport, NamespaceProfile } from "../workspace.js";
import { COMPONENT_LABEL, WORKSPACE_OBJECT_NAME } from "./labels.js";
import { hardenedContainerSecurityContext, hardenedPodSpec, SCRATCH_MOUNTS, SCRATCH_VOLUMES } from "./pod-security.js";
import { WORKSPACE_VOLUME } from "./storage.js";
import { kube } from "./objects.js";
import { CHECKOUT_ENV, RUNTIME_PATHS } from "../../contracts/runtime-env.js";

// The export of a finished DeveloperWorkspace's evidence, in two parts, because a NetworkPolicy
// selects pods and a pod's containers share its network:
// - the collector, a native sidecar beside the runtime: it copies the checked-out commit before the
//   runtime starts, and once the runtime has exited it makes the patch and serves it on the pod's
//   network. It holds no credential and reaches nothing.
// - the export, its own pod: the only one that reaches the registry and holds the push
//   credential. It fetches from the collector, pushes one OCI artifact and reports the digest in
//   its termination message, which Berth records.
// The collector keeps the pod (and so an ephemeral workspace's files) until the export is done
// or collectTimeoutSeconds have passed.

export const EVIDENCE_EXPORT_NAME = "evidence-export";
export const EVIDENCE_PORT = 9090;
/** Where the runtime writes its verification result, which the collector exports. */
export const VERIFICATION_RESULT = RUNTIME_PATHS.verificationResult;
const CA_DIR = "/etc/berth/ca";
/** The Job controller's label on a Job's pods (Kubernetes 1.27+). */
export const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

/** The workload's pods: what the collector serves from. */
export const workloadPods = (): Record<string, string> => ({ [JOB_NAME_LABEL]: WORKSPACE_OBJECT_NAME });
/** The export's pods, and only they. */
export const evidenceExportPods = (p: NamespaceProfile): Record<string, string> => ({ ...p.labels, [COMPONENT_LABEL]: EVIDENCE_EXPORT_NAME });

/** Each copied CA as a volume, and where a container mounts it. */
export function caVolume(ca: CaBundle): IVolume {
  return { name: ca.configMap, configMap: { name: ca.configMap } };
}
export function caMount(ca: CaBundle): IVolumeMount {
  return { name: ca.configMap, mountPath: `${CA_DIR}/${ca.destination}`, readOnly: true };
}
/** The one file a container trusts for a destination: Go, OpenSSL and Node.js (through Berth's export) read SSL_CERT_FILE, git GIT_SSL_CAINFO. */
export const caFile = (ca: CaBundle) => `${CA_DIR}/${ca.destination}/ca.crt`;

/** The private CAs, one ConfigMap each, copied from the profile's caBundle so that pods here can mount them. */
export function renderCaBundles(p: NamespaceProfile): Record<string, KubeObject> {
  const out: Record<string, KubeObject> = {};
  for (const ca of p.caBundles ?? []) {
    out[`ca-bundle-${ca.destination}`] = kube<IConfigMap>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: ca.configMap, namespace: p.namespace, labels: p.labels },
      data: { "ca.crt": ca.pem },
    });
  }
  return out;
}

/** The collector: an init container that keeps running (a native sidecar) beside the runtime. */
export function collectorContainer(e: EvidenceExport): IContainer {
  return {
    name: "evidence",
    image: e.image,
    args: ["collect"],
    restartPolicy: "Always",
    env: [
      { name: CHECKOUT_ENV.checkoutDir, value: RUNTIME_PATHS.checkout },
      { name: "BERTH_EVIDENCE_PORT", value: String(EVIDENCE_PORT) },
      { name: "BERTH_VERIFICATION_RESULT", value: VERIFICATION_RESULT },
      { name: "BERTH_BASELINE_DIR", value: COLLECTOR_DIR },
      { name: "BERTH_BASELINE_MAX_BYTES", value: String(BASELINE_MAX_BYTES) },
    ],
    ports: [{ name: "evidence", containerPort: EVIDENCE_PORT, protocol: "TCP" }],
    // The kubelet starts the runtime only once the collector answers: it has read the commit
    // before the runtime could touch it, and holds the port before the runtime could take it.
    // Copying a large commit takes time (0.5 s per 20,000 files here, more for big files on slow
    // disks): five minutes before the kubelet restarts the collector, which would start again.
    startupProbe: { httpGet: { path: "/healthz", port: EVIDENCE_PORT }, periodSeconds: 1, failureThreshold: 300 },
    resources: { requests: e.resources, limits: e.resources },
    securityContext: hardenedContainerSecurityContext(),
    // Its own scratch, which the runtime does not mount: the copy of the checked-out commit the
    // patch is made against, kept there also for a restart.
    volumeMounts: [
      { name: WORKSPACE_VOLUME, mountPath: RUNTIME_PATHS.workspace, readOnly: true },
      { name: COLLECTOR_VOLUME.name, mountPath: COLLECTOR_DIR },
    ],
  };
}

/**
 * The collector's own scratch volume: the copy of the checked-out commit's tree (at most
 * BASELINE_MAX_BYTES; a larger commit keeps the runtime from starting, naming why) and what git
 * writes while it makes the patch (a few times the patch's 8 MiB cap).
 */
export const COLLECTOR_VOLUME: IVolume = { name: "evidence-collector", emptyDir: { sizeLimit: "1Gi" } };
const BASELINE_MAX_BYTES = 768 * 1024 * 1024;
const COLLECTOR_DIR = "/var/lib/berth-evidence";

/** Where the export fetches the evidence: the collector, on the workload pod's address. */
export function collectorUrl(podIP: string): string {
  return `http://${podIP.includes(":") ? `[${podIP}]` : podIP}:${EVIDENCE_PORT}`;
}

/**
 * The export Job, once the outcome is recorded: it pushes that outcome, as recorded, with what the
 * collector at `collector` (collectorUrl) serves. Without a collector (the runtime never started,
 * or the collector's time ran out) it pushes the outcome alone.
 */
export function renderEvidenceExport(p: NamespaceProfile, spec: { source: { repository: string; revision: string } }, outcome: Outcome, collector: string | undefined): KubeObject | undefined {
  const e = p.evidence;
  if (e === undefined) return undefined;
  const { evidence: _exported, verification: _verification, ...recorded } = outcome;
  const env: IEnvVar[] = [
    { name: "BERTH_WORKSPACE_ID", value: p.workspaceID },
    { name: "BERTH_EVIDENCE_REPOSITORY", value: e.repository },
    { name: "BERTH_EVIDENCE_TAG", value: e.tag },
    { name: "BERTH_SOURCE_REPOSITORY", value: spec.source.repository },
    { name: "BERTH_SOURCE_REVISION", value: spec.source.revision },
    { name: "BERTH_OUTCOME", value: JSON.stringify(recorded) },
    ...(collector ? [{ name: "BERTH_COLLECTOR_URL", value: collector }] : []),
    ...(e.credential ? [{ name: "BERTH_REGISTRY_AUTH", valueFrom: { secretKeyRef: { name: e.credential.name, key: e.credential.key } } }] : []),
    ...(e.caBundle ? [{ name: "SSL_CERT_FILE", value: caFile(e.caBundle) }] : []),
    ...(e.tokenRealmHosts ? [{ name: "BERTH_TOKEN_REALM_HOSTS", value: e.tokenRealmHosts.join(",") }] : []),
  ];
  const pods = evidenceExportPods(p);
  return kube<IJob>({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: EVIDENCE_EXPORT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      // Each attempt is a pod whose termination message says why it failed; the Job's back-off
      // spaces them out, and the collector's time bounds them all.
      backoffLimit: 6,
      activeDeadlineSeconds: e.collectTimeoutSeconds,
      template: {
        metadata: { labels: pods },
        spec: {
          ...hardenedPodSpec(p),
          restartPolicy: "Never",
          containers: [
            {
              name: "export",
              image: e.image,
              args: ["export"],
              env,
              terminationMessagePolicy: "File",
              resources: { requests: e.resources, limits: e.resources },
              securityContext: hardenedContainerSecurityContext(),
              volumeMounts: [SCRATCH_MOUNTS[0]!, ...(e.caBundle ? [caMount(e.caBundle)] : [])],
            },
          ],
          volumes: [SCRATCH_VOLUMES[0]!, ...(e.caBundle ? [caVolume(e.caBundle)] : [])],
        },
      },
    },
  });
}
