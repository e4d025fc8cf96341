import { fatal, normal, type RunFunctionRequest, type RunFunctionResponse, setDesiredResources, setOutput, to, warning } from "@crossplane-org/function-sdk-typescript";
import type { KubeObject } from "../model.js";
import { API_VERSION } from "../schema/documents.js";
import { parseDocument } from "../schema/errors.js";
import { lifecycleRulesSchema } from "../schema/lifecycle.js";
import { decideLifecycle, type LifecycleDecision } from "./rules.js";

/** The Operation step's requirements, by the names its pipeline gives them. */
export const LIFECYCLE_REQUIREMENTS = {
  workspaces: { apiVersion: API_VERSION, kind: "ExecutionWorkspace" },
  classes: { apiVersion: API_VERSION, kind: "ExecutionWorkspaceClass" },
} as const;

export type LifecycleVerdict = { type: "fatal"; message: string } | { type: "decided"; decision: LifecycleDecision };

/**
 * The lifecycle Operation's step: every ExecutionWorkspace and class in, the workspaces to change
 * out. An Operation can only apply, never delete, and must not own what GitOps owns, so each
 * change is one of Berth's own annotations on the workspace (suspended, released or expired);
 * the composition reads it and renders the workspace accordingly, and the metadata change makes
 * Crossplane reconcile the workspace at once.
 */
export function judgeLifecycle(req: RunFunctionRequest, now: Date): LifecycleVerdict {
  const input = parseDocument(lifecycleRulesSchema, req.input);
  if (!input.ok) return { type: "fatal", message: `invalid LifecycleRules input: ${input.problems.join("; ")}` };
  const lists: Record<string, KubeObject[]> = {};
  for (const [name, selector] of Object.entries(LIFECYCLE_REQUIREMENTS)) {
    const got = req.requiredResources?.[name];
    if (got === undefined) {
      return {
        type: "fatal",
        message: `the Operation step must require every ${selector.kind}: add requirements.requiredResources {requirementName: ${name}, apiVersion: ${selector.apiVersion}, kind: ${selector.kind}}`,
      };
    }
    lists[name] = (got.items ?? []).map((r) => r.resource as KubeObject).filter((o) => o !== undefined);
  }
  const decision = decideLifecycle({ workspaces: lists.workspaces!, classes: lists.classes!, now, secondsPerMinute: input.value.secondsPerMinute });
  return { type: "decided", decision };
}

/** Writes a lifecycle verdict into the Operation's response: applies, output, and one event per change. */
export function respondLifecycle(req: RunFunctionRequest, verdict: LifecycleVerdict): RunFunctionResponse {
  const rsp = to(req);
  if (verdict.type === "fatal") return fatal(rsp, verdict.message);
  const { acted, refused } = verdict.decision;
  const desired: Record<string, Record<string, unknown>> = {};
  for (const a of acted) {
    desired[a.workspace] = { apiVersion: API_VERSION, kind: "ExecutionWorkspace", metadata: { name: a.workspace, annotations: a.annotations } };
  }
  setDesiredResources(rsp, desired);
  // Normal and warning results become events on the Operation: the record of what acted and when.
  for (const a of acted) normal(rsp, a.message);
  for (const r of refused) warning(rsp, `left ExecutionWorkspace "${r.workspace}" alone: ${r.message}`);
  setOutput(rsp, {
    acted: acted.map(({ workspace, rule, at, message }) => ({ workspace, rule, at, message })),
    refused: refused.map(({ workspace, rule, message }) => ({ workspace, rule, message })),
  });
  return rsp;
}
