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

export const workspaceProfileSchema = z.looseObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("WorkspaceProfile"),
  metadata,
  spec: z.preprocess(withoutCrossplaneFields, workspaceProfileSpecSchema),
  status: z.looseObject({}).optional(),
});

export const developerWorkspaceSchema = z
  .looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal("DeveloperWorkspace"),
    metadata,
    spec: z.preprocess(withoutCrossplaneFields, developerWorkspaceSpecSchema),
    status: z.looseObject({}).optional(),
  })
  .superRefine(requireNameRule);

/**
 * Kinds named by metadata.name alone: the name becomes the Namespace `ws-<name>` and label
 * values, so it must be a short DNS label (the API server checks it with the same rule).
 */
export const SHORT_NAME_RULE = {
  rule: "size(self.metadata.name) <= 40 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  message: "metadata.name must be a DNS label of at most 40 characters",
};

const shortName = metadata.extend({ name: dnsLabel(40) });

export const executionWorkspaceClassSchema = z.looseObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("ExecutionWorkspaceClass"),
  metadata,
  spec: z.preprocess(withoutCrossplaneFields, executionWorkspaceClassSpecSchema),
  status: z.looseObject({}).optional(),
});

export const executionWorkspaceSchema = z.looseObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("ExecutionWorkspace"),
  metadata: shortName,
  spec: z.preprocess(withoutCrossplaneFields, executionWorkspaceSpecSchema),
  status: z.looseObject({}).optional(),
});

export const workspaceCheckpointSchema = z.looseObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("WorkspaceCheckpoint"),
  metadata,
  spec: z.preprocess(withoutCrossplaneFields, workspaceCheckpointSpecSchema),
  status: z.looseObject({}).optional(),
});

export type WorkspaceProfile = z.output<typeof workspaceProfileSchema>;
export type ExecutionWorkspaceClass = z.output<typeof executionWorkspaceClassSchema>;
export type ExecutionWorkspace = z.output<typeof executionWorkspaceSchema>;
export type WorkspaceCheckpoint = z.output<typeof workspaceCheckpointSchema>;
export type DeveloperWorkspace = z.output<typeof developerWorkspaceSchema>;
