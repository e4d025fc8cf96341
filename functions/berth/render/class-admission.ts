import type { KubeObject } from "../model.js";
import { API_VERSION } from "../schema/documents.js";
import { MANAGED_BY } from "./labels.js";

/** The policy in admission/policies.yaml that reads a class as its parameter. */
export const CLASS_PERMITS_POLICY = "berth-class-permits";

/**
 * What a class enforces at admission, rendered by the class itself: a binding of Berth's
 * permits policy with the class as its parameter, so that options the class does not permit
 * are refused before anything is created; and the ClusterRole that grants `use` on it.
 */
export function renderClassAdmission(className: string): Record<string, KubeObject> {
  const labels = { ...MANAGED_BY, "workspaces.berth.dev/class": className };
  return {
    "admission-binding": {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: `berth-class-${className}`, labels },
      spec: {
        policyName: CLASS_PERMITS_POLICY,
        validationActions: ["Deny"],
        paramRef: { name: className, parameterNotFoundAction: "Deny" },
        matchResources: {
          resourceRules: [{ apiGroups: ["workspaces.berth.dev"], apiVersions: ["*"], operations: ["CREATE", "UPDATE"], resources: ["executionworkspaces"] }],
        },
      },
    },
    "use-role": {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `berth-class-${className}-use`, labels },
      rules: [{ apiGroups: [API_VERSION.split("/")[0]!], resources: ["executionworkspaceclasses"], resourceNames: [className], verbs: ["use"] }],
    },
  };
}
