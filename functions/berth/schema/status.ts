import { z } from "zod";

// What Berth writes into status. The XRDs are generated from these schemas too, so Crossplane
// never prunes a field the function sets.

/** Provider-neutral health of a workspace's objects right now. */
export const phase = z.enum(["Pending", "Provisioning", "Ready", "Suspending", "Suspended", "Resuming", "Released", "Expired", "Failed", "Deleting"]);

const health = {
  phase: phase.optional(),
  reason: z.string().max(64).optional().describe("CamelCase reason for the phase."),
  message: z.string().max(2048).optional(),
};

export const exportedEvidenceSchema = z
  .strictObject({
    repository: z.string().max(255),
    tag: z.string().max(128),
    digest: z.string().max(80).describe("The artifact's manifest digest: fetch it as <repository>@<digest>."),
    exportedAt: z.string().max(64),
  })
  .describe("Where the run's evidence was pushed; once recorded it is never rewritten.");

export const verificationResultSchema = z
  .strictObject({
    exitCode: z.int(),
    output: z.string().max(1024).describe("The first 1,024 characters; the artifact holds up to 64 KiB."),
    reportedBy: z.enum(["runtime"]).describe("Who ran the command: the runtime, which writes its result to BERTH_VERIFICATION_RESULT."),
  })
  .describe("The verification command's result, as exported with the evidence.");

export const outcomeSchema = z
  .strictObject({
    result: z.enum(["Succeeded", "Failed"]),
    reason: z.string().max(64),
    message: z.string().max(512).optional(),
    finishedAt: z.string().max(64).optional(),
    evidence: exportedEvidenceSchema.optional(),
    verification: verificationResultSchema.optional(),
  })
  .describe("The historical terminal outcome of the workspace's run; once recorded it is never rewritten.");

export const evidenceStatusSchema = z
  .strictObject({
    state: z.enum(["Collecting", "Exporting", "Exported", "Failed", "Waived"]),
    reason: z.string().max(64).optional(),
    message: z.string().max(512).optional(),
    attempts: z.int().min(0).optional().describe("Export attempts that failed so far."),
  })
  .describe("Where the export of the run's evidence stands (lifecycle.evidence.exportBeforeCleanup).");

export const capacityStatusSchema = z
  .strictObject({
    mode: z.enum(["persistent", "ephemeral"]),
    size: z.string().max(32),
    storageClassName: z.string().max(253).optional(),
    provisioner: z.string().max(253).optional(),
    declared: z.enum(["Runtime", "AdmissionOnly", "None"]).optional().describe("What the profile's operator declares."),
    enforcement: z.enum(["Runtime", "EmptyDirSizeLimit", "NotEnforced"]).describe("What bounds the size, as Berth judges it."),
    enforced: z.boolean(),
    reason: z.string().max(64).optional(),
    message: z.string().max(512).optional(),
  })
  .describe("The capacity declaration: declared versus enforced, and why.");

const used = (what: string) => z.string().max(80).optional().describe(`${what} used of the workspace's ResourceQuota, as "used/hard".`);
export const resourceUsageSchema = z
  .strictObject({ cpu: used("CPU limits"), memory: used("Memory limits"), storage: used("Volume storage"), pods: used("Pods") })
  .describe("What the workspace uses of its budget, read from its ResourceQuota's status.");

export const developerWorkspaceStatusSchema = z.strictObject({
  ...health,
  namespace: z.string().max(63).optional(),
  profile: z.string().max(63).optional(),
  capacity: capacityStatusSchema.optional(),
  usage: resourceUsageSchema.optional(),
  outcome: outcomeSchema.optional(),
  evidence: evidenceStatusSchema.optional(),
});

export const workspaceProfileStatusSchema = z.strictObject({
  ...health,
  profileHash: z.string().max(80).optional().describe("Fingerprint of the validated spec."),
  capacity: z
    .strictObject({
      storageClassName: z.string().max(253),
      provisioner: z.string().max(253).optional(),
      declared: z.enum(["Runtime", "AdmissionOnly", "None"]),
      conforming: z.boolean().describe("Whether persistent workspaces are accepted on this profile."),
      reason: z.string().max(64),
      message: z.string().max(512),
    })
    .optional(),
});

export type DeveloperWorkspaceStatus = z.output<typeof developerWorkspaceStatusSchema>;
export type WorkspaceProfileStatus = z.output<typeof workspaceProfileStatusSchema>;
export type CapacityStatus = z.output<typeof capacityStatusSchema>;
export type EvidenceStatus = z.output<typeof evidenceStatusSchema>;
export type ResourceUsage = z.output<typeof resourceUsageSchema>;

/** The class a workspace was bound to, pinned so a later edit of the class cannot change it silently. */
export const bindingSchema = z.strictObject({
  name: z.string().max(253),
  uid: z.string().max(64).optional(),
  generation: z.int().optional(),
  classHash: z.string().max(80),
});

export const workspaceLifecycleSchema = z
  .strictObject({
    lastActivity: z.string().max(64).optional().describe("The later of the last activity signal (annotation lifecycle.berth.dev/last-activity) and the workspace's creation: idle since then."),
    expiresAt: z.string().max(64).optional().describe("When the class's maximum lifetime ends."),
    suspendedAt: z.string().max(64).optional().describe("When one of Berth's rules suspended the workspace; cleared by activity stamped in that second or later for IdleTimeout (the rule only acts on activity a minute old), after it for Detached."),
    suspendedBy: z.string().max(64).optional().describe("The rule that suspended it: IdleTimeout, or Detached (the onDetach action Suspend)."),
    detachedAt: z.string().max(64).optional().describe("When the session detached (annotation lifecycle.berth.dev/detached-at); cleared by activity after it."),
    expiredAt: z.string().max(64).optional().describe("When Berth's MaxLifetime rule expired the workspace; final."),
    releasedAt: z.string().max(64).optional().describe("When Berth's IdleTimeout rule released an Ephemeral workspace whose onDetach action is Delete; cleared by activity stamped in that second or later."),
  })
  .describe("What Berth's lifecycle rules read and did.");

export const executionWorkspaceStatusSchema = z.strictObject({
  ...health,
  namespace: z.string().max(63).optional(),
  provider: z.enum(["agent-sandbox", "agent-substrate"]).optional(),
  binding: bindingSchema.optional(),
  capacity: capacityStatusSchema.optional(),
  usage: resourceUsageSchema.optional(),
  lifecycle: workspaceLifecycleSchema.optional(),
  lineage: z
    .strictObject({ kind: z.enum(["Restored", "Forked"]), checkpoint: z.string().max(253), sourceWorkspace: z.string().max(253).optional() })
    .optional()
    .describe("Where the workspace's files came from."),
  notDeclarable: z.string().max(1024).optional().describe("What the provider does through its own API that Berth cannot declare."),
});

export const executionWorkspaceClassStatusSchema = z.strictObject({
  ...health,
  classHash: z.string().max(80).optional().describe("Fingerprint of the validated class spec; workspaces pin it."),
  profileHash: z.string().max(80).optional(),
});

export const workspaceCheckpointStatusSchema = z.strictObject({
  ...health,
  sourceNamespace: z.string().max(63).optional(),
  snapshot: z
    .strictObject({
      volumeSnapshotName: z.string().max(253),
      contentName: z.string().max(253).optional(),
      snapshotHandle: z.string().max(1024).optional(),
      driver: z.string().max(253).optional(),
      restoreSize: z.string().max(32).optional(),
      readyToUse: z.boolean(),
    })
    .optional(),
});

export type ExecutionWorkspaceStatus = z.output<typeof executionWorkspaceStatusSchema>;
export type ExecutionWorkspaceClassStatus = z.output<typeof executionWorkspaceClassStatusSchema>;
export type WorkspaceCheckpointStatus = z.output<typeof workspaceCheckpointStatusSchema>;
