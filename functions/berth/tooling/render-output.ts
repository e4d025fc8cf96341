import { createHash } from "node:crypto";
import { Ready, type RunFunctionResponse, Severity, Status } from "@crossplane-org/function-sdk-typescript";
import { goYAML } from "./go-yaml.js";
import type { KubeObject } from "../model.js";

// What `crossplane render` (CLI v2.5, core v2.4) prints for one reconcile, reproduced so that
// `npm run render` can be diffed against it byte for byte. Facts from crossplane/cli
// cmd/crossplane/render/xr and crossplane/crossplane internal/render, checked against the
// real binaries.

/** render replaces every condition's transition time with this one. */
const RENDER_TIME = "2024-01-01T00:00:00Z";

/**
 * The UID render gives an XR that has none: a name-based (SHA-1) UUID in the nil namespace
 * of "<group>/<version>, Kind=<Kind>\0<namespace>\0<name>", as uuid.NewSHA1 computes it.
 */
export function renderUID(xr: KubeObject): string {
  const uid = xr.metadata?.uid;
  if (typeof uid === "string" && uid !== "") return uid;
  const data = `${xr.apiVersion}, Kind=${xr.kind}\u0000${xr.metadata?.namespace ?? ""}\u0000${xr.metadata?.name ?? ""}`;
  const hash = createHash("sha1").update(Buffer.alloc(16)).update(data).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** "a", "a, b", "a, b, and c", "a, b, c, and 2 more": crossplane-runtime's StableNAndSomeMore(3). */
function someNames(names: string[]): string {
  const sorted = [...names].sort();
  if (sorted.length > 3) return `${sorted.slice(0, 3).join(", ")}, and ${sorted.length - 3} more`;
  if (sorted.length === 3) return `${sorted.slice(0, 2).join(", ")}, and ${sorted[2]}`;
  return sorted.join(", ");
}

function condition(type: string, status: "True" | "False" | "Unknown", reason: string, message?: string) {
  return { lastTransitionTime: RENDER_TIME, ...(message ? { message } : {}), reason, status, type };
}

/**
 * The function's own conditions, in the order it sent them. Crossplane sets them while it
 * handles the composition's result: after Responsive, before Synced and Ready.
 */
function functionConditions(response: RunFunctionResponse) {
  const word = (s: Status) => (s === Status.STATUS_CONDITION_TRUE ? "True" : s === Status.STATUS_CONDITION_FALSE ? "False" : "Unknown");
  return (response.conditions ?? []).map((c) => condition(c.type, word(c.status), c.reason, c.message));
}

/** The XR's Ready condition, as Crossplane derives it from the function's readiness answers. */
function readyCondition(response: RunFunctionResponse) {
  const compositeReady = response.desired?.composite?.ready ?? Ready.READY_UNSPECIFIED;
  if (compositeReady === Ready.READY_TRUE) return condition("Ready", "True", "Available");
  if (compositeReady === Ready.READY_FALSE) return condition("Ready", "False", "Creating");
  const unready = Object.entries(response.desired?.resources ?? {})
    .filter(([, r]) => r.ready !== Ready.READY_TRUE)
    .map(([name]) => name);
  return unready.length === 0 ? condition("Ready", "True", "Available") : condition("Ready", "False", "Creating", `Unready resources: ${someNames(unready)}`);
}

/** The owner reference Crossplane makes an XR of each object it composes. */
export interface ComposedController {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/**
 * A composed object with the metadata Crossplane's composer gives it before applying it
 * (RenderComposedResourceMetadata; what Crossplane 2.4 owns in a composed object's
 * managedFields): its name in the composition, the composite's label, and its controller.
 */
export function withComposedMetadata(o: KubeObject, resourceName: string, compositeName: string, controller: ComposedController): KubeObject {
  const metadata = o.metadata ?? {};
  return {
    ...o,
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations as object | undefined), "crossplane.io/composition-resource-name": resourceName },
      labels: { ...(metadata.labels as object | undefined), "crossplane.io/composite": compositeName },
      ownerReferences: [{ ...controller, controller: true, blockOwnerDeletion: true }],
    },
  };
}

export interface OutputOptions {
  /** Also print the function's results, as `crossplane render -r` does. */
  includeResults?: boolean;
  /** The Composition's pipeline step name, which render puts in front of each result. */
  step?: string;
}

/** The YAML stream `crossplane render` prints: the XR with its status, then each composed resource. */
export function renderOutput(xr: KubeObject, response: RunFunctionResponse, options: OutputOptions = {}): string {
  const name = xr.metadata?.name ?? "";
  const uid = renderUID(xr);
  const composed = Object.entries(response.desired?.resources ?? {})
    .map(([resourceName, r]) => ({
      ...withComposedMetadata(r.resource as KubeObject, resourceName, name, { apiVersion: xr.apiVersion, kind: xr.kind, name, uid }),
      resourceName,
    }))
    .sort((a, b) => (a.resourceName < b.resourceName ? -1 : a.resourceName > b.resourceName ? 1 : 0));

  const refKey = (o: KubeObject) => `${o.apiVersion}${o.kind}${o.metadata?.name ?? ""}${o.metadata?.namespace ?? ""}`;
  const resourceRefs = composed
    .map(({ resourceName: _, ...o }) => o as KubeObject)
    .sort((a, b) => (refKey(a) < refKey(b) ? -1 : refKey(a) > refKey(b) ? 1 : 0))
    .map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name, ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}) }));

  const status = ((response.desired?.composite?.resource as KubeObject | undefined)?.status ?? {}) as Record<string, unknown>;
  const documents: unknown[] = [
    {
      apiVersion: xr.apiVersion,
      kind: xr.kind,
      metadata: { name, ...(xr.metadata?.namespace ? { namespace: xr.metadata.namespace } : {}) },
      spec: { crossplane: { resourceRefs } },
      status: {
        ...status,
        conditions: [
          condition("Responsive", "True", "WatchCircuitClosed"),
          ...functionConditions(response),
          condition("Synced", "True", "ReconcileSuccess"),
          readyCondition(response),
        ],
      },
    },
    ...composed.map(({ resourceName: _, ...o }) => o),
  ];
  if (options.includeResults) {
    for (const r of response.results) {
      documents.push({
        apiVersion: "render.crossplane.io/v1beta1",
        kind: "Result",
        message: `Pipeline step "${options.step ?? "render"}": ${r.message}`,
        reason: r.reason ?? "ComposeResources",
        severity: r.severity === Severity.SEVERITY_NORMAL ? "Normal" : "Warning",
      });
    }
  }
  return documents.map((d) => `---\n${goYAML(d)}`).join("");
}
