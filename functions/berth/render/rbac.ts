import type { IRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import type { IRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import type { IPolicyRule } from "kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { kube } from "./objects.js";

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];

// What a workload may touch in its own namespace. Deliberately absent, whatever the access:
// Secrets (credentials of the checkout), NetworkPolicies, ResourceQuotas and LimitRanges (the
// boundary itself), RBAC and ServiceAccount tokens (escalation), and pods/exec.
const WORKLOAD_KINDS: readonly { apiGroup: string; resources: string[]; writable: boolean }[] = [
  { apiGroup: "", resources: ["pods", "configmaps"], writable: true },
  { apiGroup: "", resources: ["pods/log", "events", "services", "endpoints", "persistentvolumeclaims"], writable: false },
  { apiGroup: "apps", resources: ["deployments", "replicasets", "statefulsets"], writable: true },
  { apiGroup: "batch", resources: ["jobs", "cronjobs"], writable: true },
];

export function roleRules(access: "read" | "edit"): IPolicyRule[] {
  return WORKLOAD_KINDS.map(({ apiGroup, resources, writable }) => ({
    apiGroups: [apiGroup],
    resources,
    verbs: access === "edit" && writable ? [...READ, ...WRITE] : READ,
  }));
}

/** RBAC exists only for a declared Kubernetes capability, and only inside the workspace. */
export function renderRbac(p: NamespaceProfile): Record<string, KubeObject> {
  if (p.kubernetesAccess === "none") return {};
  const name = `${WORKSPACE_OBJECT_NAME}-${p.kubernetesAccess}`;
  return {
    role: kube<IRole>({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: p.namespace, labels: p.labels },
      rules: roleRules(p.kubernetesAccess),
    }),
    "role-binding": kube<IRoleBinding>({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: p.namespace, labels: p.labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name: WORKSPACE_OBJECT_NAME, namespace: p.namespace }],
    }),
  };
}
