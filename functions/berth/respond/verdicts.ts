import type { Observed, Requirement, Verdict } from "../model.js";
import type { Problem } from "../problems.js";

/** How the XR is named in messages: `DeveloperWorkspace "alice-xr"`. */
export function describeComposite(observed: Observed): string {
  const name = observed.composite.metadata?.name;
  return `${observed.composite.kind} "${typeof name === "string" ? name : "(unnamed)"}"`;
}

export function fatal(observed: Observed, requirements: Record<string, Requirement>, cause: string): Verdict {
  return { type: "fatal", requirements, message: `cannot render ${describeComposite(observed)}: ${cause}` };
}

/**
 * The answer when a render cannot go ahead. A workspace that owns nothing yet reports the
 * problem in its status (phase Pending while waiting, Failed when refused). One that already
 * owns objects gets a fatal result instead: an empty desired state would make Crossplane
 * delete them, volume included, and nothing may be lost because a profile went missing.
 * The one exception is a render still fetching its inputs, whose answer Crossplane discards
 * once it has called again with them.
 */
export function stalled(
  observed: Observed,
  requirements: Record<string, Requirement>,
  problem: Problem,
  status: Record<string, unknown> = {},
): Verdict {
  if (problem.type === "invalid") return fatal(observed, requirements, problem.message);
  // A fatal answer would also stop Crossplane's requirement loop before it fetched what was
  // asked for, so a render still fetching inputs is never fatal.
  const existing = Object.keys(observed.resources).length;
  if (existing > 0 && problem.type !== "fetching") {
    return fatal(observed, requirements, `${problem.message}; keeping its ${existing} existing objects unchanged`);
  }
  return {
    type: "rendered",
    requirements,
    resources: {},
    status: {
      ...status,
      phase: problem.type === "refused" ? "Failed" : "Pending",
      reason: problem.reason,
      message: problem.message,
    },
    compositeReady: false,
    warnings: [`${describeComposite(observed)}: ${problem.message}`],
  };
}

/**
 * The answer when the workspace's Namespace belongs to someone else (ownership.ts,
 * namespaceClaim): nothing at all, phase Failed. Unlike `stalled`, objects the workspace already
 * owns are not kept: they can only be in that other Namespace (made before Berth refused a
 * clash), where its NetworkPolicies and RBAC act on another workspace's pods. Nothing of the
 * other workspace is touched: Crossplane deletes only what this XR controls.
 */
export function notItsNamespace(observed: Observed, requirements: Record<string, Requirement>, problem: Problem & { type: "refused" }, status: Record<string, unknown> = {}): Verdict {
  const existing = Object.keys(observed.resources).length;
  return {
    type: "rendered",
    requirements,
    resources: {},
    status: { ...status, phase: "Failed", reason: problem.reason, message: problem.message },
    compositeReady: false,
    warnings: [`${describeComposite(observed)}: ${problem.message}${existing > 0 ? `; removing the ${existing} objects it made there` : ""}`],
  };
}
