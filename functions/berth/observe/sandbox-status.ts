// What the agent-sandbox controller (v1.0.1, sigs.k8s.io/agent-sandbox controllers/
// sandbox_controller.go) says about a Sandbox, read in one place. Every condition it writes
// carries the generation of the spec it was written for (observedGeneration), and Berth reads a
// condition only if it speaks for the Sandbox as it is now: after Berth changes the spec
// (suspend, resume), the condition written for the previous spec says nothing about the new one.
// A condition without observedGeneration cannot be shown to be current and is not read.
//
// The controller's words, used here and never copied into a workspace's status:
//   Ready      True once its pod runs, is Ready and has an IP (reason DependenciesReady);
//              False with reason SandboxSuspended as soon as the mode is Suspended, before the
//              pod is gone; False with reason SandboxExpired once spec.shutdownTime has passed.
//   Suspended  True (PodTerminated) only once the pod is gone; False (PodTerminating) while it
//              is still being deleted, and (NotSuspended) while Running.
import type { KubeObject } from "../model.js";

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** The Sandbox's condition of this type, if it was written for the Sandbox's current generation. */
function currentCondition(sandbox: KubeObject | undefined, type: string): Condition | undefined {
  const c = ((sandbox?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((x) => x.type === type);
  const generation = sandbox?.metadata?.generation;
  return c !== undefined && generation !== undefined && c.observedGeneration === generation ? c : undefined;
}

const operatingMode = (sandbox: KubeObject | undefined) => (sandbox?.spec as { operatingMode?: string } | undefined)?.operatingMode;

/** Running: its pod is up and ready, for the spec as it is now. */
export const sandboxRunning = (sandbox: KubeObject | undefined): boolean => currentCondition(sandbox, "Ready")?.status === "True";

/** Stopped after a suspend: the Suspended mode applied and the controller has seen the pod gone. */
export const sandboxStopped = (sandbox: KubeObject | undefined): boolean => operatingMode(sandbox) === "Suspended" && currentCondition(sandbox, "Suspended")?.status === "True";

/** When the controller stopped the Sandbox at its shutdownTime (that time), if it has. */
export function sandboxExpiredAt(sandbox: KubeObject | undefined): Date | undefined {
  const ready = currentCondition(sandbox, "Ready");
  if (ready?.status !== "False" || ready.reason !== "SandboxExpired") return undefined;
  const at = Date.parse(String((sandbox?.spec as { shutdownTime?: string } | undefined)?.shutdownTime ?? ready.lastTransitionTime));
  return Number.isNaN(at) ? undefined : new Date(at);
}
