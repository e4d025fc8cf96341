import type { RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { stringify } from "yaml";
import type { KubeObject } from "./model.js";

/** Recursively sorts object keys, as Go's YAML marshalling of unstructured objects does. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function documentOf(o: unknown): string {
  return `---\n${stringify(sorted(o), { lineWidth: 0, defaultStringType: "PLAIN", defaultKeyType: "PLAIN" })}`;
}

export interface OutputOptions {
  includeResults?: boolean;
}

/** The YAML stream `crossplane render` prints: the XR with its status, then each composed resource. */
export function renderOutput(composite: KubeObject, response: RunFunctionResponse, options: OutputOptions = {}): string {
  const name = composite.metadata?.name ?? "";
  const desired = response.desired;
  const status = (desired?.composite?.resource as KubeObject | undefined)?.status;
  const docs: unknown[] = [
    { apiVersion: composite.apiVersion, kind: composite.kind, metadata: { name }, ...(status ? { status } : {}) },
  ];
  for (const [resourceName, r] of Object.entries(desired?.resources ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const o = r.resource as KubeObject;
    const metadata = (o.metadata ?? {}) as Record<string, unknown>;
    docs.push({
      ...o,
      metadata: {
        ...metadata,
        annotations: { ...(metadata.annotations as object | undefined), "crossplane.io/composition-resource-name": resourceName },
        labels: { ...(metadata.labels as object | undefined), "crossplane.io/composite": name },
        ownerReferences: [
          { apiVersion: composite.apiVersion, blockOwnerDeletion: true, controller: true, kind: composite.kind, name, uid: "" },
        ],
      },
    });
  }
  if (options.includeResults) {
    for (const r of response.results) docs.push({ apiVersion: "render.crossplane.io/v1beta1", kind: "Result", message: r.message, severity: r.severity });
  }
  return docs.map(documentOf).join("");
}
