import type { ExecutionWorkspaceClassSpec } from "../schema/execution.js";
import { idleAction, suspendRefusal } from "./rules.js";
import { type LifecycleSignals, rfc3339 } from "./signals.js";

/**
 * What the lifecycle signals mean for one render of an ExecutionWorkspace: released (nothing is
 * rendered), or live with the state its runtime is rendered in. Every annotation is checked
 * against the class again, so an annotation alone never makes Berth do what the class forbids.
 */
export type WorkspaceLifecycle =
  | { type: "released"; reason: "DeletedOnDetach" | "IdleTimeout"; message: string }
  | {
      type: "live";
      /** The state the runtime is rendered in: the spec's, unless a rule or an expiry stops it. */
      desiredState: "Ready" | "Suspended";
      /** A suspension one of Berth's rules (or a detach with Suspend) made and the class permits. */
      byRule?: { at: Date; rule: string };
      /** When it expired (Berth's MaxLifetime rule, or agent-sandbox at the shutdownTime Berth set); final. */
      expired?: Date;
      /** False once expired with providerResources Delete: the runtime is no longer rendered. */
      keepRuntime: boolean;
    };

export function workspaceLifecycle(
  signals: LifecycleSignals,
  className: string,
  cls: ExecutionWorkspaceClassSpec,
  spec: { desiredState: "Ready" | "Suspended"; onDetach?: string },
  onDetach: string,
): WorkspaceLifecycle {
  if (signals.detached !== undefined && onDetach === "Delete") {
    return { type: "released", reason: "DeletedOnDetach", message: `the session detached at ${rfc3339(signals.detached)} and the workspace's onDetach action is Delete` };
  }
  if (signals.released !== undefined && idleAction(className, cls, spec.onDetach).type === "Release") {
    return {
      type: "released",
      reason: "IdleTimeout",
      message: `Berth's IdleTimeout rule released the workspace at ${rfc3339(signals.released)}: ExecutionWorkspaceClass "${className}" keeps no files and the workspace's onDetach action is Delete`,
    };
  }
  const suspension = signals.suspended ?? (signals.detached !== undefined && onDetach === "Suspend" ? { at: signals.detached, rule: "Detached" } : undefined);
  const byRule = suspension !== undefined && suspendRefusal(className, cls) === undefined ? suspension : undefined;
  const expired = signals.expired;
  return {
    type: "live",
    desiredState: byRule !== undefined || expired !== undefined ? "Suspended" : spec.desiredState,
    ...(byRule ? { byRule } : {}),
    ...(expired ? { expired } : {}),
    keepRuntime: expired === undefined || cls.lifecycle.deletionPolicy.providerResources === "Retain",
  };
}
