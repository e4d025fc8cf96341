import { z } from "zod";
import { developerWorkspaceSpecSchema } from "../schema/developer-workspace.js";
import { GROUP, NAME_RULE, SHORT_NAME_RULE, VERSION } from "../schema/documents.js";
import { executionWorkspaceClassSpecSchema, executionWorkspaceSpecSchema, workspaceCheckpointSpecSchema } from "../schema/execution.js";
import { workspaceProfileSpecSchema } from "../schema/profile.js";
import {
  developerWorkspaceStatusSchema,
  executionWorkspaceClassStatusSchema,
  executionWorkspaceStatusSchema,
  workspaceCheckpointStatusSchema,
  workspaceProfileStatusSchema,
} from "../schema/status.js";

type JsonSchema = Record<string, unknown>;

/**
 * Rewrites zod's OpenAPI output into a Kubernetes structural schema: no
 * `additionalProperties: false` (the API server prunes unknown fields instead), no
 * `propertyNames`, and quantities in the int-or-string form Kubernetes' own CRDs use.
 */
function structural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== "object") return node;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === "propertyNames" || key === "$schema") continue;
    if (key === "additionalProperties" && value === false) continue;
    schema[key] = structural(value);
  }
  if (schema["x-kubernetes-int-or-string"] === true && Array.isArray(schema.anyOf)) {
    const text = (schema.anyOf as JsonSchema[]).find((branch) => branch.type === "string");
    schema.anyOf = [{ type: "integer" }, { type: "string" }];
    if (text?.pattern) schema.pattern = text.pattern;
  }
  return schema;
}

export function openAPISchema(schema: z.ZodType): JsonSchema {
  return structural(z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw" })) as JsonSchema;
}

export interface CompositeKind {
  kind: string;
  plural: string;
  /** What the kind is for and who writes it: what `kubectl explain` says of it, and the opening of its section in docs/api.md. */
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  /** Rules on the whole object, which can read metadata (carried by Crossplane from v2.2). */
  rootRules?: { rule: string; message: string }[];
  printerColumns: { name: string; type: string; jsonPath: string }[];
}

/**
 * Crossplane appends these to the printer columns of every XR's CRD (internal/xcrd,
 * CompositeResourcePrinterColumns), so a kind declares only its own: a READY or AGE of Berth's
 * would print twice.
 */
export const CROSSPLANE_PRINTER_COLUMNS = ["SYNCED", "READY", "COMPOSITION", "AGE"] as const;
/** What a workspace uses of its ResourceQuota, "used/hard". */
const usageColumns = [
  { name: "CPU", type: "string", jsonPath: ".status.usage.cpu" },
  { name: "MEMORY", type: "string", jsonPath: ".status.usage.memory" },
  { name: "STORAGE", type: "string", jsonPath: ".status.usage.storage" },
];

export const COMPOSITE_KINDS: readonly CompositeKind[] = [
  {
    kind: "WorkspaceProfile",
    plural: "workspaceprofiles",
    description:
      "What operators review once and workspaces name: runtime images, egress destinations, storage, DNS, the non-root user and resource ceilings. Berth renders only its status: whether it is valid, what its StorageClass really enforces (status.capacity.conforming) and a profileHash.",
    spec: workspaceProfileSpecSchema,
    status: workspaceProfileStatusSchema,
    printerColumns: [
      { name: "STORAGE-CLASS", type: "string", jsonPath: ".spec.storage.storageClassName" },
      { name: "CAPACITY", type: "string", jsonPath: ".status.capacity.conforming" },
      { name: "PHASE", type: "string", jsonPath: ".status.phase" },
    ],
  },
  {
    kind: "DeveloperWorkspace",
    plural: "developerworkspaces",
    description:
      "A workspace for a developer or a coding agent, written by operators: Berth renders the Namespace ws-<workspaceID> and everything in it from the WorkspaceProfile it names. It must be named <workspaceID>-xr, so one ID is one object.",
    spec: developerWorkspaceSpecSchema,
    status: developerWorkspaceStatusSchema,
    rootRules: [NAME_RULE],
    printerColumns: [
      { name: "WORKSPACE-ID", type: "string", jsonPath: ".spec.workspaceID" },
      { name: "PHASE", type: "string", jsonPath: ".status.phase" },
      { name: "OUTCOME", type: "string", jsonPath: ".status.outcome.result" },
      ...usageColumns,
    ],
  },
  {
    kind: "ExecutionWorkspaceClass",
    plural: "executionworkspaceclasses",
    description:
      "Published by operators: the sandbox provider, WorkspaceProfile and runtime of execution workspaces, their lifecycle rules, and what a workspace of the class may request (permits). Berth renders only its status (classHash, profileHash).",
    spec: executionWorkspaceClassSpecSchema,
    status: executionWorkspaceClassStatusSchema,
    printerColumns: [
      { name: "PROVIDER", type: "string", jsonPath: ".spec.provider" },
      { name: "PROFILE", type: "string", jsonPath: ".spec.profileRef.name" },
      { name: "PHASE", type: "string", jsonPath: ".status.phase" },
    ],
  },
  {
    kind: "ExecutionWorkspace",
    plural: "executionworkspaces",
    description:
      "A sandbox dedicated to one agent Session, created by users with use on its class: the same Namespace profile as a DeveloperWorkspace (ws-<name>) and the provider's objects. Anything its class does not permit is refused before anything is created.",
    spec: executionWorkspaceSpecSchema,
    status: executionWorkspaceStatusSchema,
    rootRules: [SHORT_NAME_RULE],
    printerColumns: [
      { name: "CLASS", type: "string", jsonPath: ".spec.classRef.name" },
      { name: "SESSION", type: "string", jsonPath: ".spec.sessionRef.name" },
      { name: "DESIRED", type: "string", jsonPath: ".spec.desiredState" },
      { name: "PHASE", type: "string", jsonPath: ".status.phase" },
      { name: "REASON", type: "string", jsonPath: ".status.reason" },
      // "date" prints an age: how long the workspace has been idle. An expiry is in the future,
      // which kubectl cannot print as an age, so it is shown as the time itself.
      { name: "IDLE-SINCE", type: "date", jsonPath: ".status.lifecycle.lastActivity" },
      { name: "EXPIRES", type: "string", jsonPath: ".status.lifecycle.expiresAt" },
      ...usageColumns,
    ],
  },
  {
    kind: "WorkspaceCheckpoint",
    plural: "workspacecheckpoints",
    description:
      "A CSI VolumeSnapshot of an ExecutionWorkspace's volume, created by users with use on the workspace's class; an ExecutionWorkspace's restoreFrom or forkFrom brings its files into a new workspace.",
    spec: workspaceCheckpointSpecSchema,
    status: workspaceCheckpointStatusSchema,
    printerColumns: [
      { name: "WORKSPACE", type: "string", jsonPath: ".spec.workspaceRef.name" },
      { name: "PHASE", type: "string", jsonPath: ".status.phase" },
    ],
  },
];

/** A Crossplane v2 CompositeResourceDefinition generated from the kind's zod schemas. */
export function compositeResourceDefinition(k: CompositeKind) {
  return {
    apiVersion: "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: { name: `${k.plural}.${GROUP}` },
    spec: {
      scope: "Cluster",
      group: GROUP,
      names: { kind: k.kind, plural: k.plural, categories: ["berth"] },
      defaultCompositionRef: { name: k.plural },
      versions: [
        {
          name: VERSION,
          served: true,
          referenceable: true,
          additionalPrinterColumns: k.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: "object",
              // `kubectl explain <kind>` shows it, and docs/api.md opens the kind's section with it.
              description: k.description,
              required: ["spec"],
              properties: { spec: openAPISchema(k.spec), status: openAPISchema(k.status) },
              ...(k.rootRules ? { "x-kubernetes-validations": k.rootRules } : {}),
            },
          },
        },
      ],
    },
  };
}
