// Every object Berth renders must be a valid object of its kind: each is checked against the
// Kubernetes OpenAPI schema that kubernetes-models carries for that apiVersion and kind.
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../functions/berth/model.js";
import { EXAMPLE_WORKSPACES, edited } from "../fixtures.js";
import { renderObjects } from "../rendered.js";

async function validateAgainstOpenAPI(o: KubeObject): Promise<void> {
  // kubernetes-models has one module per kind: kubernetes-models/<group/version>/<Kind>.
  const module = (await import(`kubernetes-models/${o.apiVersion}/${o.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[o.kind];
  if (Model === undefined) throw new Error(`no OpenAPI model for ${o.apiVersion} ${o.kind}`);
  new Model(o).validate();
}

const variants: [string, KubeObject][] = [
  ...Object.entries(EXAMPLE_WORKSPACES),
  ["edit access", edited(EXAMPLE_WORKSPACES.review, (w) => ((w.spec as { capabilities: { kubernetes: object } }).capabilities.kubernetes = { access: "edit", destination: "kube-api" }))],
];

describe("rendered objects validate against the Kubernetes OpenAPI schema", () => {
  it.each(variants)("%s", async (_, workspace) => {
    const objects = Object.values(renderObjects(workspace));
    expect(objects.length).toBeGreaterThanOrEqual(8);
    for (const o of objects) await expect(validateAgainstOpenAPI(o), `${o.kind} ${o.metadata?.name}`).resolves.toBeUndefined();
  });

  it("the check itself rejects an invalid object", async () => {
    const [ns] = Object.values(renderObjects(EXAMPLE_WORKSPACES.ephemeral)).filter((o) => o.kind === "NetworkPolicy");
    const broken = edited(ns!, (p) => ((p.spec as { policyTypes: unknown }).policyTypes = "Egress"));
    await expect(validateAgainstOpenAPI(broken)).rejects.toThrow();
  });
});
