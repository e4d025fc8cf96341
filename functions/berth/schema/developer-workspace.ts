import { z } from "zod";
import { capabilitiesSchema } from "./capabilities.js";
import { dnsLabel, objectRef, text, workspaceID } from "./fields.js";
import { positiveQuantity } from "./quantity.js";
import { credentialVariable, RUNTIME_VARIABLES } from "../../contracts/runtime-env.js";



/**
 * Who a credential is for decides which container receives it: the Git token goes to the
 * checkout init container and never to the runtime, which runs model-driven code; the
 * `evidence` credential (a Docker config JSON for the evidence registry) goes to the export alone.
 */
export const credentialPurpose = z.enum(["git", "inference", "mcp", "registry", "evidence"]);

const credentialSchema = z.strictObject({
  name: dnsLabel(40),
  purpose: credentialPurpose,
  secretRef: z
    .strictObject({ name: dnsLabel(63), key: z.string().min(1).max(253).regex(/^[-._a-zA-Z0-9]+$/, "must be a Secret key") })
    .describe("A Secret in the workspace namespace, delivered by the operator's secret tooling; Berth never reads its value."),
});

export const lifecycleProfile = z.enum(["persistent", "ephemeral", "review"]);

/** A task is a prompt, not a document: 16 Ki characters, well inside a pod spec's bounds. */
export const TASK_MAX_LENGTH = 16384;

export const developerWorkspaceSpecSchema = z
  .strictObject({
    workspaceID: workspaceID.describe("Stable, immutable ID; the resource must be named <workspaceID>-xr."),
    profileRef: objectRef.describe("The reviewed WorkspaceProfile this workspace is rendered with."),
    owner: z.strictObject({
      name: text(128).min(1),
      email: z.email().max(254).optional(),
    }),
    source: z.strictObject({
      repository: z
        .string()
        .max(512)
        .regex(/^https:\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~-]+)+(\.git)?$/, "must be an https:// Git repository URL without credentials or query"),
      revision: z
        .string()
        .min(1)
        .max(255)
        .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]*$/, "must be a branch, tag or commit"),
    }),
    runtime: z.strictObject({ profile: dnsLabel(40).describe("Name of a runtime in the profile's spec.runtimes.") }),
    model: z.strictObject({ name: text(128).min(1) }).optional(),
    task: z
      .string()
      .min(1)
      .max(TASK_MAX_LENGTH)
      // Lines and tabs, no other control character; \x escapes, since RE2 compiles it in the API server too.
      .regex(/^[^\x00-\x08\x0b-\x1f\x7f]*$/, "must be text: lines and tabs, no other control characters")
      .optional()
      .describe(`What the agent is asked to do: a prompt of at most ${TASK_MAX_LENGTH} characters, given to the runtime as BERTH_TASK.`),
    storage: z.strictObject({
      mode: z.enum(["persistent", "ephemeral"]),
      size: positiveQuantity,
    }),
    resources: z.strictObject({ cpu: positiveQuantity, memory: positiveQuantity }),
    capabilities: capabilitiesSchema.prefault({}),
    credentials: z
      .array(credentialSchema)
      .max(16)
      .default([])
      .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
    verification: z
      .strictObject({ command: z.array(text(1024)).min(1).max(32) })
      .optional()
      .describe("The command whose result is the workspace's verification evidence."),
    lifecycle: z.strictObject({
      profile: lifecycleProfile,
      idleTimeoutMinutes: z
        .int()
        .min(1)
        .max(10080)
        .optional()
        .describe("Given to the runtime as BERTH_IDLE_TIMEOUT_MINUTES, for it to act on; Berth does not stop an idle DeveloperWorkspace."),
      retentionMinutes: z.int().min(1).max(525600).optional(),
      deletion: z.enum(["Delete", "Retain"]).default("Delete").describe("What happens to the volume when the workspace is deleted."),
      evidence: z
        .strictObject({
          exportBeforeCleanup: z
            .boolean()
            .default(false)
            .describe(
              "Push the run's evidence (outcome, verification, changes as a patch) to the profile's evidence registry once the run ends; the Job's retention clean-up and the workspace's deletion wait until it is recorded in status.outcome.evidence.",
            ),
        })
        .prefault({}),
    }),
  })
  .superRefine((spec, ctx) => {
    // The lifecycle profile and the storage mode must tell the same story, or an "ephemeral"
    // workspace could quietly keep a volume (or a "persistent" one lose it).
    const wantsPersistent = spec.lifecycle.profile === "persistent";
    if (wantsPersistent !== (spec.storage.mode === "persistent")) {
      ctx.addIssue({
        code: "custom",
        path: ["storage", "mode"],
        message: `must be ${wantsPersistent ? "persistent" : "ephemeral"} for lifecycle.profile ${spec.lifecycle.profile}`,
      });
    }
    if (spec.lifecycle.deletion === "Retain" && spec.storage.mode !== "persistent") {
      ctx.addIssue({ code: "custom", path: ["lifecycle", "deletion"], message: "Retain needs storage.mode persistent: an ephemeral workspace has no volume to keep" });
    }
    if (spec.lifecycle.profile === "review" && spec.verification === undefined) {
      ctx.addIssue({ code: "custom", path: ["verification"], message: "Required for lifecycle.profile review: a review exists to produce verification evidence" });
    }
    for (const purpose of ["git", "evidence"] as const) {
      if (spec.credentials.filter((c) => c.purpose === purpose).length > 1) {
        ctx.addIssue({ code: "custom", path: ["credentials"], message: `must hold at most one credential with purpose ${purpose}` });
      }
    }
    if (!spec.lifecycle.evidence.exportBeforeCleanup && spec.credentials.some((c) => c.purpose === "evidence")) {
      ctx.addIssue({ code: "custom", path: ["credentials"], message: "a credential with purpose evidence is only used with lifecycle.evidence.exportBeforeCleanup" });
    }
    const gitCredentials = spec.credentials.filter((c) => c.purpose === "git");
    if (gitCredentials.length > 0 && spec.capabilities.git === undefined) {
      ctx.addIssue({ code: "custom", path: ["capabilities", "git"], message: "Required when a git credential is given" });
    }
    const names = new Set<string>();
    spec.credentials.forEach((c, i) => {
      if (names.has(c.name)) ctx.addIssue({ code: "custom", path: ["credentials", i, "name"], message: `duplicate credential name "${c.name}"` });
      names.add(c.name);
      const variable = credentialVariable(c.purpose, c.name);
      if (RUNTIME_VARIABLES.includes(variable)) {
        ctx.addIssue({ code: "custom", path: ["credentials", i, "name"], message: `"${c.name}" would set ${variable} in the runtime, a variable Berth sets itself; choose another name` });
      }
    });
  })
  .meta({
    "x-kubernetes-validations": [
      { rule: "self.workspaceID == oldSelf.workspaceID", message: "spec.workspaceID is immutable" },
      { rule: "(self.lifecycle.profile == 'persistent') == (self.storage.mode == 'persistent')", message: "spec.storage.mode must be persistent exactly when spec.lifecycle.profile is persistent" },
      { rule: "!has(self.lifecycle.deletion) || self.lifecycle.deletion != 'Retain' || self.storage.mode == 'persistent'", message: "spec.lifecycle.deletion Retain needs spec.storage.mode persistent" },
      { rule: "self.lifecycle.profile != 'review' || has(self.verification)", message: "spec.verification is required for lifecycle.profile review" },
    ],
  });

export type DeveloperWorkspaceSpec = z.output<typeof developerWorkspaceSpecSchema>;
