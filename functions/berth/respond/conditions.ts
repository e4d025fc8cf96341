import type { WorkspaceCondition } from "../model.js";
import type { CapacityStatus } from "../schema/status.js";
import type { Binding, Egress } from "../workspace.js";

/** Whether something bounds the workspace's storage at its size, as Berth judges it. */
export function capacityEnforced(capacity: CapacityStatus): WorkspaceCondition {
  return {
    type: "CapacityEnforced",
    status: capacity.enforced,
    reason: capacity.reason ?? capacity.enforcement,
    message: capacity.message ?? `${capacity.mode} storage of ${capacity.size}`,
  };
}

/** Every destination the workspace declared resolved to a reviewed destination of its profile. */
export function egressResolved(egress: readonly Egress[]): WorkspaceCondition {
  const destinations = [...new Set(egress.map((e) => e.destination))].sort();
  return {
    type: "EgressResolved",
    status: true,
    reason: "Resolved",
    message: destinations.length === 0 ? "no egress declared beyond cluster DNS" : `egress open to the reviewed destinations ${destinations.join(", ")} only`,
  };
}

/** The class version the workspace is pinned to. */
export function classBound(binding: Binding): WorkspaceCondition {
  return { type: "ClassBound", status: true, reason: "Bound", message: `bound to ExecutionWorkspaceClass "${binding.name}" at ${binding.classHash}` };
}

/** Whether the runtime is (being) stopped with the files kept, and who asked. */
export function suspended(desiredState: "Ready" | "Suspended", byRule: { rule: string } | undefined): WorkspaceCondition {
  if (desiredState !== "Suspended") return { type: "Suspended", status: false, reason: "Running", message: "the runtime is meant to run" };
  return byRule === undefined
    ? { type: "Suspended", status: true, reason: "Declared", message: "spec.desiredState is Suspended" }
    : { type: "Suspended", status: true, reason: byRule.rule, message: byRule.rule === "Detached" ? "the session detached; onDetach is Suspend" : `Berth's ${byRule.rule} rule suspended it` };
}
