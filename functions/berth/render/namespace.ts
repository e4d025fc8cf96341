import type { INamespace } from "kubernetes-models/v1/Namespace";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { CAPACITY_ENFORCEMENT_LABEL, RUNTIME_CLASS_LABEL } from "./labels.js";
import { kube } from "./objects.js";

/** The workspace's own Namespace, enforcing the profile's Pod Security level. */
export function renderNamespace(p: NamespaceProfile): KubeObject {
  const { level, version } = p.profile.podSecurity;
  const podSecurity: Record<string, string> = {};
  for (const mode of ["enforce", "audit", "warn"]) {
    podSecurity[`pod-security.kubernetes.io/${mode}`] = level;
    podSecurity[`pod-security.kubernetes.io/${mode}-version`] = version;
  }
  return kube<INamespace>({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: p.namespace,
      labels: {
        ...p.labels,
        ...podSecurity,
        ...(p.userNamespacesRequired ? { [CAPACITY_ENFORCEMENT_LABEL]: "Runtime" } : {}),
        ...(p.runtimeClassName ? { [RUNTIME_CLASS_LABEL]: p.runtimeClassName } : {}),
      },
    },
  });
}
