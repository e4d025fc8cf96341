import { z } from "zod";
import { capabilitiesSchema, kubernetesAccess } from "./capabilities.js";
import { dnsLabel, image, objectRef, pinnedImage, text } from "./fields.js";
import { positiveQuantity } from "./quantity.js";

// Execution workspaces (Orka): a sandbox dedicated to one agent Session, from agent-sandbox or
// Agent Substrate, chosen through an operator-published ExecutionWorkspaceClass. The class
// says what a workspace may ask for; the workspace asks.

export const provider = z.enum(["agent-sandbox", "agent-substrate"]);
export const reuseScope = z.enum(["None", "Session"]);
export const detachAction = z.enum(["Suspend", "Delete", "Keep"]);
const retention = z.enum(["Delete", "Retain"]);
const resourceList = z.strictObject({ cpu: positiveQuantity, memory: positiveQuantity });

export const executionWorkspaceClassSpecSchema = z
  .strictObject({
    provider: provider.describe("Which sandbox provider runs the workspace."),
    profileRef: objectRef.describe("The reviewed WorkspaceProfile: images, destinations, storage, DNS."),
    runtime: z.strictObject({ profile: dnsLabel(40).describe("A runtime of the profile's spec.runtimes.") }),
    mode: z
      .enum(["Durable", "Ephemeral"])
      .default("Durable")
      .describe("Durable keeps the workspace's files on a volume across suspend; Ephemeral keeps none and cannot suspend."),
    agentSandbox: z
      .strictObject({
        runtimeClassName: dnsLabel(63).optional().describe("RuntimeClass of the sandbox pod (for example gvisor or kata)."),
      })
      .optional(),
    agentSubstrate: z
      .strictObject({
        ateomImage: image.describe("Worker image of the dedicated WorkerPool."),
        pauseImage: pinnedImage.describe("Root sandbox container of the actor, pinned by digest."),
        snapshotLocation: z
          .string()
          .min(1)
          .max(512)
          .regex(/^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/, "must be a URL such as gs://bucket/path")
          .describe("Where Substrate keeps the actor's data-only snapshots."),
        workerPool: z
          .strictObject({
            replicas: z.int().min(1).max(16).default(1),
            nodeSelector: z.record(z.string().max(253), z.string().max(63)).default({}),
          })
          .prefault({}),
      })
      .optional(),
    reuseScopes: z.array(reuseScope).min(1).max(2).default(["None"]).describe("Reuse policies workspaces of this class may choose."),
    lifecycle: z
      .strictObject({
        onDetach: z
          .strictObject({ default: detachAction.default("Suspend"), allowed: z.array(detachAction).min(1).max(3).default(["Suspend", "Delete"]) })
          .prefault({}),
        idleTimeoutMinutes: z.int().min(1).max(10080).default(30),
        maxLifetimeMinutes: z.int().min(1).max(525600).default(1440),
        deletionPolicy: z
          .strictObject({ providerResources: retention.default("Delete"), volumes: retention.default("Delete"), checkpoints: retention.default("Retain") })
          .prefault({}),
      })
      .prefault({}),
    permits: z
      .strictObject({
        resources: z.strictObject({ default: resourceList, max: resourceList }),
        storage: z.strictObject({ default: positiveQuantity, max: positiveQuantity }),
        destinations: z.array(dnsLabel(40)).max(128).default([]).describe("Reviewed destinations of the profile that workspaces may open."),
        kubernetesAccess: kubernetesAccess.default("none").describe("The most Kubernetes API authority a workspace may ask for."),
        checkpoint: z.boolean().default(false),
        restore: z.boolean().default(false),
        fork: z.boolean().default(false),
      })
      .describe("What a workspace of this class may request; anything else is refused before anything is created."),
  })
  .superRefine((c, ctx) => {
    if (c.provider === "agent-sandbox" && c.agentSubstrate !== undefined) ctx.addIssue({ code: "custom", path: ["agentSubstrate"], message: "must not be set for provider agent-sandbox" });
    if (c.provider === "agent-substrate" && c.agentSubstrate === undefined) ctx.addIssue({ code: "custom", path: ["agentSubstrate"], message: "Required for provider agent-substrate" });
    if (c.provider === "agent-substrate" && c.agentSandbox !== undefined) ctx.addIssue({ code: "custom", path: ["agentSandbox"], message: "must not be set for provider agent-substrate" });
    if (!c.lifecycle.onDetach.allowed.includes(c.lifecycle.onDetach.default)) {
      ctx.addIssue({ code: "custom", path: ["lifecycle", "onDetach", "default"], message: "must be one of lifecycle.onDetach.allowed" });
    }
    if (c.mode === "Ephemeral" && c.lifecycle.onDetach.allowed.includes("Suspend")) {
      ctx.addIssue({ code: "custom", path: ["lifecycle", "onDetach", "allowed"], message: "must not include Suspend for mode Ephemeral: there are no files to keep" });
    }
    const snapshots = c.permits.checkpoint || c.permits.restore || c.permits.fork;
    if (snapshots && c.mode !== "Durable") {
      ctx.addIssue({ code: "custom", path: ["permits"], message: "checkpoint, restore and fork need mode Durable: they work on the workspace's volume" });
    }
    if (snapshots && c.provider === "agent-substrate") {
      ctx.addIssue({
        code: "custom",
        path: ["permits"],
        message:
          "checkpoint, restore and fork are CSI snapshots of the workspace volume, which an Agent Substrate actor does not mount: Substrate's own data-only snapshots are taken through its API, which Berth cannot declare",
      });
    }
  })
  .meta({
    "x-kubernetes-validations": [
      { rule: "self.provider != 'agent-substrate' || has(self.agentSubstrate)", message: "spec.agentSubstrate is required for provider agent-substrate" },
      { rule: "self.provider != 'agent-sandbox' || !has(self.agentSubstrate)", message: "spec.agentSubstrate must not be set for provider agent-sandbox" },
      {
        rule: "self.provider != 'agent-substrate' || !has(self.permits) || !((has(self.permits.checkpoint) && self.permits.checkpoint) || (has(self.permits.restore) && self.permits.restore) || (has(self.permits.fork) && self.permits.fork))",
        message: "Agent Substrate classes cannot permit checkpoint, restore or fork: Berth's checkpoints are CSI snapshots of a volume Substrate actors do not mount",
      },
    ],
  });

export type ExecutionWorkspaceClassSpec = z.output<typeof executionWorkspaceClassSpecSchema>;

export const checkpointRef = z.strictObject({ checkpointRef: objectRef });

export const executionWorkspaceSpecSchema = z
  .strictObject({
    classRef: objectRef.describe("The ExecutionWorkspaceClass; choosing it needs Kubernetes use on it."),
    sessionRef: z
      .strictObject({ name: dnsLabel(63), namespace: dnsLabel(63).optional() })
      .describe("The agent Session this workspace is dedicated to."),
    reusePolicy: reuseScope.default("None"),
    desiredState: z.enum(["Ready", "Suspended"]).default("Ready"),
    onDetach: detachAction.optional().describe("What happens when the session detaches; the class's default if unset."),
    requests: z
      .strictObject({
        resources: z.strictObject({ cpu: positiveQuantity.optional(), memory: positiveQuantity.optional() }).optional(),
        storage: z.strictObject({ size: positiveQuantity }).optional(),
        capabilities: capabilitiesSchema.optional(),
      })
      .prefault({})
      .describe("Options the class may permit; anything it does not permit is refused."),
    restoreFrom: checkpointRef.optional().describe("Start from a WorkspaceCheckpoint's files, continuing its lineage (needs use on the checkpoint)."),
    forkFrom: checkpointRef.optional().describe("Start a new lineage from a WorkspaceCheckpoint's files (needs use on the checkpoint)."),
  })
  .superRefine((s, ctx) => {
    if (s.restoreFrom !== undefined && s.forkFrom !== undefined) ctx.addIssue({ code: "custom", path: ["forkFrom"], message: "must not be set together with restoreFrom" });
  })
  .meta({
    "x-kubernetes-validations": [
      { rule: "!(has(self.restoreFrom) && has(self.forkFrom))", message: "spec.restoreFrom and spec.forkFrom are exclusive" },
      { rule: "self.classRef == oldSelf.classRef", message: "spec.classRef is immutable" },
      { rule: "has(self.restoreFrom) == has(oldSelf.restoreFrom) && has(self.forkFrom) == has(oldSelf.forkFrom)", message: "spec.restoreFrom and spec.forkFrom are immutable" },
    ],
  });

export type ExecutionWorkspaceSpec = z.output<typeof executionWorkspaceSpecSchema>;

export const workspaceCheckpointSpecSchema = z
  .strictObject({
    workspaceRef: objectRef.describe("The ExecutionWorkspace whose files are saved."),
    classRef: objectRef.describe("The workspace's ExecutionWorkspaceClass: taking a checkpoint needs use on it, and it must be the workspace's own."),
    volumeSnapshotClassName: dnsLabel(63).optional().describe("The CSI VolumeSnapshotClass; the cluster default if unset."),
    description: text(256).optional(),
  })
  .meta({
    "x-kubernetes-validations": [{ rule: "self.workspaceRef == oldSelf.workspaceRef && self.classRef == oldSelf.classRef", message: "spec.workspaceRef and spec.classRef are immutable" }],
  });

export type WorkspaceCheckpointSpec = z.output<typeof workspaceCheckpointSpecSchema>;
