import { z } from "zod";
import { dnsLabel } from "./fields.js";
import { developerWorkspaceSpecSchema } from "./developer-workspace.js";
import { executionWorkspaceClassSpecSchema, executionWorkspaceSpecSchema, workspaceCheckpointSpecSchema } from "./execution.js";
import { workspaceProfileSpecSchema } from "./profile.js";

export const GROUP = "workspaces.berth.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;

// Metadata is Kubernetes' business; Berth reads only what it needs and lets the rest through.
const metadata = z.looseObject({
  name: z.string().min(1).max(253),
  uid: z.string().optional(),
  generation: z.int().optional(),
  deletionTimestamp: z.string().optional(),
});

/**
 * The name rule: one workspace per ID is a property of the API server itself, because a
 * cluster-scoped name can exist only once and the name is derived from the ID.
 */
export const NAME_RULE = {
  rule: "self.metadata.name == self.spec.workspaceID + '-xr'",
  message: "metadata.name must be <spec.workspaceID>-xr",
};

/**
 * Crossplane writes spec.crossplane (composition selection, resource references) into every
 * v2 XR. It is Crossplane's field, not the author's, so it is set aside before the strict
 * spec schema sees the document.
 */
function withoutCrossplaneFields(spec: unknown): unknown {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return spec;
  const { crossplane: _, ...authored } = spec as Record<string, unknown>;
  return authored;
}

function requireNameRule(doc: { metadata: { name: string }; spec: { workspaceID: string } }, ctx: z.RefinementCtx) {
  const want = `${doc.spec.workspaceID}-xr`;
  if (doc.metadata.name !== want) {
    ctx.addIssue({ code: "custom", path: ["metadata", "name"], message: `must be "${want}" (<spec.workspaceID>-xr)` });
  }
}

/**
 * A Berth XR as Crossplane hands it over: the kind's spec schema, Crossplane's own spec fields
 * set aside, status passed through. `metadata` lets a kind narrow its name.
 */
function compositeDocument<K extends string, S extends z.ZodType, M extends z.ZodType = typeof metadata>(kind: K, spec: S, meta?: M) {
  return z.looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(kind),
    metadata: (meta ?? metadata) as M,
    spec: z.preprocess(withoutCrossplaneFields, spec),
    status: z.looseObject({}).optional(),
  });
}

/**
 * Kinds named by metadata.name alone: the name becomes the Namespace `ws-<name>` and label
 * values, so it must be a short DNS label (the API server checks it with the same rule).
 */
export const SHORT_NAME_RULE = {
  rule: "size(self.metadata.name) <= 40 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  message: "metadata.name must be a DNS label of at most 40 characters",
};

export const workspaceProfileSchema = compositeDocument("WorkspaceProfile", workspaceProfileSpecSchema);
export const developerWorkspaceSchema = compositeDocument("DeveloperWorkspace", developerWorkspaceSpecSchema).superRefine(requireNameRule);
export const executionWorkspaceClassSchema = compositeDocument("ExecutionWorkspaceClass", executionWorkspaceClassSpecSchema);
export const executionWorkspaceSchema = compositeDocument("ExecutionWorkspace", executionWorkspaceSpecSchema, metadata.extend({ name: dnsLabel(40) }));
export const workspaceCheckpointSchema = compositeDocument("WorkspaceCheckpoint", workspaceCheckpointSpecSchema);

export type WorkspaceProfile = z.output<typeof workspaceProfileSchema>;
export type ExecutionWorkspaceClass = z.output<typeof executionWorkspaceClassSchema>;
export type ExecutionWorkspace = z.output<typeof executionWorkspaceSchema>;
export type WorkspaceCheckpoint = z.output<typeof workspaceCheckpointSchema>;
export type DeveloperWorkspace = z.output<typeof developerWorkspaceSchema>;
