import type { IPodSecurityContext } from "kubernetes-models/v1/PodSecurityContext";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { ISecurityContext } from "kubernetes-models/v1/SecurityContext";
import type { IVolume } from "kubernetes-models/v1/Volume";
import type { IVolumeMount } from "kubernetes-models/v1/VolumeMount";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { RUNTIME_PATHS } from "../../contracts/runtime-env.js";

/** Pod-level hardening every workspace pod gets, whatever runs in it. */
export function hardenedPodSpec(
  p: NamespaceProfile,
): Pick<IPodSpec, "serviceAccountName" | "automountServiceAccountToken" | "enableServiceLinks" | "hostUsers" | "securityContext" | "dnsPolicy" | "dnsConfig"> {
  const securityContext: IPodSecurityContext = {
    runAsNonRoot: true,
    runAsUser: p.profile.user.uid,
    runAsGroup: p.profile.user.gid,
    fsGroup: p.profile.user.gid,
    seccompProfile: { type: "RuntimeDefault" },
  };
  return {
    serviceAccountName: WORKSPACE_OBJECT_NAME,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    ...(p.userNamespacesRequired ? { hostUsers: false } : {}),
    securityContext,
    ...workspaceDns(p),
  };
}

/**
 * The profile's own resolver, when it names one: the pod asks it alone (dnsPolicy None), with the
 * search path ClusterFirst would give it. Without one the pod uses cluster DNS, which forwards
 * any name upstream (docs/security.md, "What stays out of scope").
 */
function workspaceDns(p: NamespaceProfile): Pick<IPodSpec, "dnsPolicy" | "dnsConfig"> {
  const { nameservers, clusterDomain = "cluster.local" } = p.profile.dns;
  if (nameservers === undefined) return {};
  return {
    dnsPolicy: "None",
    dnsConfig: { nameservers: [...nameservers], searches: [`${p.namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain], options: [{ name: "ndots", value: "5" }] },
  };
}

/** Container-level hardening: Pod Security `restricted`, and a read-only root. */
export function hardenedContainerSecurityContext(): ISecurityContext {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    privileged: false,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/** Writable scratch space a read-only root still needs. */
export const SCRATCH_VOLUMES: IVolume[] = [
  { name: "tmp", emptyDir: { sizeLimit: "1Gi" } },
  { name: "home", emptyDir: { sizeLimit: "1Gi" } },
];
export const SCRATCH_MOUNTS: IVolumeMount[] = [
  { name: "tmp", mountPath: RUNTIME_PATHS.tmp },
  { name: "home", mountPath: RUNTIME_PATHS.home },
];

export const API_TOKEN_VOLUME = "kube-api-access";

/**
 * A short-lived projected token for a workload granted Kubernetes access: the same files the
 * kubelet would mount, but only into the container that declared the capability.
 */
export function apiTokenVolume(): IVolume {
  return {
    name: API_TOKEN_VOLUME,
    projected: {
      sources: [
        { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    },
  };
}

export const API_TOKEN_MOUNT: IVolumeMount = {
  name: API_TOKEN_VOLUME,
  mountPath: RUNTIME_PATHS.apiToken,
  readOnly: true,
};
