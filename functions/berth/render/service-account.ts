import type { IServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { kube } from "./objects.js";

/**
 * The workspace's identity. No token is ever mounted from it: a workload that needs the
 * Kubernetes API gets a short-lived projected token, and only through a declared capability.
 */
export function renderServiceAccount(p: NamespaceProfile): KubeObject {
  return kube<IServiceAccount>({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    automountServiceAccountToken: false,
  });
}
