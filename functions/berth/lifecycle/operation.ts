import { fatal, normal, type RunFunctionRequest, type RunFunctionResponse, setDesiredResources, setOutput, to, warning } from "@crossplane-org/function-sdk-typescript";
import type { KubeObject } from "../model.js";
import { API_VERSION } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import { lifecycleRulesSchema } from "../schema/lifecycle.js";
import { decideLifecycle, type LifecycleDecision } from "./rules.js";

/** A decision cut to what one run may change and list; what is left waits for the next run, which decides it again. */
export interface LimitedDecision extends LifecycleDecision {
  /** Workspaces due for a change that this run leaves to the next. */
  deferred: number;
  /** Refusals not listed (each would be a warning event every run). */
  unlistedRefusals: number;
}

/**
 * At most `max` changes and `max` listed refusals per run. Every change is an apply Crossplane
 * makes, an event and an entry in the Operation's status, and the response travels back under
 * Crossplane's own 4 MiB bound: a mass expiry of thousands of workspaces must not make the one
 * Operation too large to answer or to store. The workspaces left are still due next run (a
 * changed workspace no longer is), so every one is reached.
 */
export function limitDecision(decision: LifecycleDecision, max: number): LimitedDecision {
  return {
    acted: decision.acted.slice(0, max),
    refused: decision.refused.slice(0, max),
    deferred: Math.max(0, decision.acted.length - max),
    unlistedRefusals: Math.max(0, decision.refused.length - max),
  };
}

/** The Operation step's requirements, by the names its pipeline gives them. */
export const LIFECYCLE_REQUIREMENTS = {
  workspaces: { apiVersion: API_VERSION, kind: "ExecutionWorkspace" },
  classes: { apiVersion: API_VERSION, kind: "ExecutionWorkspaceClass" },
} as const;

export type LifecycleVerdict = { type: "fatal"; message: string } | { type: "decided"; decision: LimitedDecision; workspaces: number };

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
  return { type: "decided", decision: limitDecision(decision, input.value.maxChangesPerRun), workspaces: lists.workspaces!.length };
}

/** Writes a lifecycle verdict into the Operation's response: applies, output, and one event per change. */
export function respondLifecycle(req: RunFunctionRequest, verdict: LifecycleVerdict): RunFunctionResponse {
  const rsp = to(req);
  if (verdict.type === "fatal") return fatal(rsp, verdict.message);
  const { acted, refused, deferred, unlistedRefusals } = verdict.decision;
  const desired: Record<string, Record<string, unknown>> = {};
  for (const a of acted) {
    desired[a.workspace] = { apiVersion: API_VERSION, kind: "ExecutionWorkspace", metadata: { name: a.workspace, annotations: a.annotations } };
  }
  setDesiredResources(rsp, desired);
  // Normal and warning results become events on the Operation: the record of what acted and when.
  for (const a of acted) normal(rsp, a.message);
  for (const r of refused) warning(rsp, `left ExecutionWorkspace "${r.workspace}" alone: ${r.message}`);
  if (deferred > 0) normal(rsp, `${deferred} more ExecutionWorkspaces are due for a change; this run made ${acted.length}, the most one run makes (maxChangesPerRun), and the next run makes the rest`);
  if (unlistedRefusals > 0) warning(rsp, `left ${unlistedRefusals} more ExecutionWorkspaces alone for the same kinds of reasons; not listed (at most ${refused.length} per run)`);
  setOutput(rsp, {
    acted: acted.map(({ workspace, rule, at, message }) => ({ workspace, rule, at, message })),
    refused: refused.map(({ workspace, rule, message }) => ({ workspace, rule, message })),
    deferred,
    unlistedRefusals,
  });
  return rsp;
}
