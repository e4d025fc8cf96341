import type { KubeObject } from "../model.js";
import { executionWorkspaceClassSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import type { ExecutionWorkspaceClassSpec } from "../schema/execution.js";
import type { ExecutionWorkspaceStatus } from "../schema/status.js";
import { EXPIRED_AT, type LifecycleRule, lifecycleSignals, RELEASED_AT, rfc3339, SUSPENDED_AT, SUSPENDED_BY, timeOf } from "./signals.js";

/**
 * Why a class does not let Berth suspend its workspaces, or undefined if it does. Suspend keeps
 * the files and stops the runtime, so it needs a Durable class on a runtime whose suspend Berth
 * can declare (agent-sandbox's Suspended mode; Agent Substrate suspends through its own API).
 */
export function suspendRefusal(className: string, cls: ExecutionWorkspaceClassSpec): string | undefined {
  if (cls.mode !== "Durable") return `ExecutionWorkspaceClass "${className}" is ${cls.mode}: it keeps no files, so Berth never suspends its workspaces`;
  if (cls.provider !== "agent-sandbox") return `ExecutionWorkspaceClass "${className}" runs on ${cls.provider}, whose suspend Berth cannot declare`;
  return undefined;
}

/**
 * What the idle rule does to an idle workspace of this class: suspend it (Durable classes whose
 * suspend Berth can declare), release it (Ephemeral classes, when the workspace's onDetach
 * action is Delete: there are no files to keep, so its runtime and Namespace go), or nothing,
 * with the reason.
 */
export function idleAction(className: string, cls: ExecutionWorkspaceClassSpec, onDetach: string | undefined): { type: "Suspend" | "Release" } | { type: "LeaveRunning"; why: string } {
  if (cls.mode === "Ephemeral") {
    const action = onDetach ?? cls.lifecycle.onDetach.default;
    return action === "Delete"
      ? { type: "Release" }
      : { type: "LeaveRunning", why: `ExecutionWorkspaceClass "${className}" is Ephemeral and the workspace's onDetach action is ${action}` };
  }
  const refusal = suspendRefusal(className, cls);
  return refusal === undefined ? { type: "Suspend" } : { type: "LeaveRunning", why: refusal };
}

/** An automatic change the Operation makes, and the annotations that carry it to the composition. */
export interface LifecycleAction {
  workspace: string;
  rule: LifecycleRule;
  at: string;
  message: string;
  annotations: Record<string, string>;
}

/** A workspace a rule would have acted on, left alone because its class does not permit the action. */
export interface LifecycleRefusal {
  workspace: string;
  rule: LifecycleRule;
  message: string;
}

export interface LifecycleDecision {
  acted: LifecycleAction[];
  refused: LifecycleRefusal[];
}

export interface LifecycleWorld {
  workspaces: KubeObject[];
  classes: KubeObject[];
  now: Date;
  /** How long a class's minute lasts, in seconds (60 unless time is compressed). */
  secondsPerMinute: number;
}

/**
 * Which workspaces Berth's rules act on now. Pure: the world and the time in, the changes out.
 * A workspace past its class's maximum lifetime is expired, whatever its phase; otherwise only
 * running workspaces are judged idle, so one still provisioning, already suspended, failed or
 * being deleted is never suspended.
 */
export function decideLifecycle({ workspaces, classes, now, secondsPerMinute }: LifecycleWorld): LifecycleDecision {
  const classByName = new Map(classes.map((c) => [c.metadata?.name, c]));
  const decision: LifecycleDecision = { acted: [], refused: [] };
  for (const workspace of workspaces) {
    const name = workspace.metadata?.name;
    const spec = workspace.spec as { classRef?: { name?: string }; desiredState?: string; onDetach?: string } | undefined;
    const status = workspace.status as ExecutionWorkspaceStatus | undefined;
    if (name === undefined || workspace.metadata?.deletionTimestamp !== undefined) continue;
    const signals = lifecycleSignals(workspace);
    if (signals.expired !== undefined) continue;

    const className = spec?.classRef?.name ?? "";
    const cls = classByName.get(className);
    const parsed = cls === undefined ? undefined : parseDocument(executionWorkspaceClassSchema, cls);
    // A class that is gone or invalid is the composition's to report; the rules wait for it.
    if (parsed === undefined || !parsed.ok) continue;

    // Expiry applies in any phase, suspended included, and before any other rule.
    const created = timeOf(workspace.metadata?.creationTimestamp);
    const lifetimeMinutes = parsed.value.spec.lifecycle.maxLifetimeMinutes;
    if (created !== undefined && now.getTime() - created.getTime() >= lifetimeMinutes * secondsPerMinute * 1000) {
      const at = rfc3339(now);
      decision.acted.push({
        workspace: name,
        rule: "MaxLifetime",
        at,
        message: `expired ExecutionWorkspace "${name}" at ${at}: created at ${rfc3339(created)}, past the ${lifetimeMinutes} minutes of lifetime ExecutionWorkspaceClass "${className}" allows`,
        annotations: { [EXPIRED_AT]: at },
      });
      continue;
    }

    // Only running workspaces are judged idle.
    if (spec?.desiredState === "Suspended" || status?.phase !== "Ready") continue;
    if (signals.suspended !== undefined || signals.released !== undefined || signals.lastActivity === undefined) continue;
    const idleMinutes = parsed.value.spec.lifecycle.idleTimeoutMinutes;
    const idleForMs = now.getTime() - signals.lastActivity.getTime();
    if (idleForMs < idleMinutes * secondsPerMinute * 1000) continue;

    const since = rfc3339(signals.lastActivity);
    const action = idleAction(className, parsed.value.spec, spec?.onDetach);
    if (action.type === "LeaveRunning") {
      decision.refused.push({ workspace: name, rule: "IdleTimeout", message: `idle since ${since}, past ${idleMinutes} idle minutes; left running: ${action.why}` });
      continue;
    }
    const at = rfc3339(now);
    const idle = `idle since ${since}, past the ${idleMinutes} idle minutes ExecutionWorkspaceClass "${className}" allows`;
    decision.acted.push(
      action.type === "Suspend"
        ? { workspace: name, rule: "IdleTimeout", at, message: `suspended ExecutionWorkspace "${name}" at ${at}: ${idle}`, annotations: { [SUSPENDED_AT]: at, [SUSPENDED_BY]: "IdleTimeout" } }
        : {
            workspace: name,
            rule: "IdleTimeout",
            at,
            message: `released ExecutionWorkspace "${name}" at ${at}: ${idle}; the class keeps no files and the workspace's onDetach action is Delete`,
            annotations: { [RELEASED_AT]: at },
          },
    );
  }
  return decision;
}
