// The admission manifests operators install (admission/*.yaml): valid objects, CEL that
// parses, and the policy the classes' rendered bindings name. Their behaviour is proven
// against a real API server in test/conformance/admission.test.ts.
import { parse } from "@marcbachmann/cel-js";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../functions/berth/model.js";
import { CLASS_PERMITS_POLICY, renderClassAdmission } from "../../functions/berth/render/class-admission.js";
import { loadObjects } from "../fixtures.js";

const MANIFESTS = ["admission/params.yaml", "admission/policies.yaml", "admission/rbac.yaml"].flatMap(loadObjects);

async function validateAgainstOpenAPI(o: KubeObject): Promise<void> {
  const module = (await import(`kubernetes-models/${o.apiVersion}/${o.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  new module[o.kind]!(o).validate();
}

type Policy = { spec: { matchConditions?: { expression: string }[]; variables?: { expression: string }[]; validations: { expression: string; messageExpression?: string }[] } };

describe("admission manifests", () => {
  it.each(MANIFESTS.map((o) => [`${o.kind} ${o.metadata?.name}`, o] as const))("%s is a valid object", async (_, o) => {
    await expect(validateAgainstOpenAPI(o)).resolves.toBeUndefined();
  });

  it.each(MANIFESTS.filter((o) => o.kind === "ValidatingAdmissionPolicy").map((o) => [o.metadata!.name!, o] as const))("%s: every CEL expression parses", (_, policy) => {
    const spec = (policy as unknown as Policy).spec;
    const expressions = [
      ...(spec.matchConditions ?? []).map((c) => c.expression),
      ...(spec.variables ?? []).map((v) => v.expression),
      ...spec.validations.flatMap((v) => [v.expression, ...(v.messageExpression ? [v.messageExpression] : [])]),
    ];
    expect(expressions.length).toBeGreaterThan(0);
    for (const e of expressions) expect(() => parse(e), e).not.toThrow();
  });

  it("every policy without parameters per class has a binding; the permits policy is bound by each class", () => {
    const policies = MANIFESTS.filter((o) => o.kind === "ValidatingAdmissionPolicy").map((o) => o.metadata!.name!);
    const bound = MANIFESTS.filter((o) => o.kind === "ValidatingAdmissionPolicyBinding").map((o) => (o.spec as { policyName: string }).policyName);
    expect(policies.filter((p) => !bound.includes(p))).toEqual([CLASS_PERMITS_POLICY]);
    const binding = renderClassAdmission("gpu-sandbox")["admission-binding"]!;
    expect(binding.spec).toMatchObject({ policyName: CLASS_PERMITS_POLICY, paramRef: { name: "gpu-sandbox" } });
  });

  it("the role a class renders grants use on that class alone", () => {
    expect(renderClassAdmission("gpu-sandbox")["use-role"]!.rules).toEqual([
      { apiGroups: ["workspaces.berth.dev"], resources: ["executionworkspaceclasses"], resourceNames: ["gpu-sandbox"], verbs: ["use"] },
    ]);
  });

  it("the role aggregated into Crossplane grants no wildcard and nothing on Secrets", () => {
    const role = MANIFESTS.find((o) => o.metadata?.name === "crossplane:aggregate-to-crossplane:berth")!;
    expect((role.metadata!.labels as Record<string, string>)["rbac.crossplane.io/aggregate-to-crossplane"]).toBe("true");
    for (const rule of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
      expect([...rule.apiGroups, ...rule.resources, ...rule.verbs]).not.toContain("*");
      expect(rule.resources).not.toContain("secrets");
    }
  });
});
