import { RunFunctionRequest, type RunFunctionResponse, Severity } from "@crossplane-org/function-sdk-typescript";
import { EXPIRED_AT, LAST_ACTIVITY, RELEASED_AT, rfc3339, SUSPENDED_AT, SUSPENDED_BY } from "../functions/berth/lifecycle/signals.js";
import type { KubeObject } from "../functions/berth/model.js";
import { EPHEMERAL_CLASS } from "./execution-cases.js";
import { CLASS_SANDBOX, CLASS_SUBSTRATE, EW_SANDBOX, edited, managedFields, required } from "./fixtures.js";

// Whole requests and whole responses for Berth's lifecycle Operation step, run in-process with a
// fixed clock (test/unit/lifecycle.test.ts) and over gRPC against the real clock
// (test/grpc/grpc.test.ts). Every time in a request is relative to `now`, so both agree; `at`
// is the time the function read its clock, which over gRPC is the server's.

export interface LifecycleCase {
  name: string;
  reason: string;
  req: RunFunctionRequest;
  want: RunFunctionResponse;
}

const API = "workspaces.berth.dev/v1alpha1";
/** A Durable agent-sandbox class that allows 15 idle minutes (the example's). */
const DURABLE = CLASS_SANDBOX;
/** A class with no files to keep: it never permits suspend. */
const EPHEMERAL = EPHEMERAL_CLASS;
/** Agent Substrate suspends through its own API, which Berth cannot declare. */
const SUBSTRATE = CLASS_SUBSTRATE;

const minutesBefore = (now: Date, m: number) => rfc3339(new Date(now.getTime() - m * 60_000));

/** A running ExecutionWorkspace of `className`, created 120 minutes before `now`, with these annotations. */
function workspace(now: Date, name: string, className: string, annotations: Record<string, string> = {}, edit: (w: any) => void = () => {}): KubeObject {
  return edited(EW_SANDBOX, (w: any) => {
    w.metadata = { name, creationTimestamp: minutesBefore(now, 120), annotations };
    w.spec.classRef = { name: className };
    w.status = { phase: "Ready", reason: "Available" };
    edit(w);
  });
}

function operationRequest(workspaces: KubeObject[], input: Record<string, unknown> = {}): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: "test" },
    input: { apiVersion: API, kind: "LifecycleRules", ...input },
    requiredResources: required({ workspaces, classes: [DURABLE, EPHEMERAL, SUBSTRATE] }),
  });
}

/**
 * The lifecycle Operation's request for a fleet of `count` running ExecutionWorkspaces as the
 * API server returns them: each about 8.5 KB on the wire with its managedFields (what
 * bench:system measured at N = 1,000: 8,512,114 bytes). Every other one has been idle for an
 * hour, past its class's 15 minutes; the rest were active a minute ago.
 */
export function fleetOperationRequest(now: Date, count: number): { req: RunFunctionRequest; idle: string[] } {
  const fields = managedFields(5, 44);
  const idle: string[] = [];
  const workspaces = Array.from({ length: count }, (_, i) => {
    const name = `fleet-${String(i).padStart(5, "0")}`;
    if (i % 2 === 0) idle.push(name);
    return workspace(now, name, "sandbox-session", { [LAST_ACTIVITY]: minutesBefore(now, i % 2 === 0 ? 60 : 1) }, (w) => {
      w.metadata.uid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      w.metadata.managedFields = fields;
    });
  });
  return { req: operationRequest(workspaces), idle };
}

interface Acted {
  workspace: string;
  rule: string;
  message: string;
  annotations: Record<string, string>;
}

/** The idle rule's change: Berth's suspension annotations. */
function idle(at: string, workspace: string, since: string, minutes = 15, className = "sandbox-session"): Acted {
  return {
    workspace,
    rule: "IdleTimeout",
    message: `suspended ExecutionWorkspace "${workspace}" at ${at}: idle since ${since}, past the ${minutes} idle minutes ExecutionWorkspaceClass "${className}" allows`,
    annotations: { [SUSPENDED_AT]: at, [SUSPENDED_BY]: "IdleTimeout" },
  };
}

/** The lifetime rule's change: Berth's expiry annotation. */
function expired(at: string, workspace: string, created: string, minutes = 1440, className = "sandbox-session"): Acted {
  return {
    workspace,
    rule: "MaxLifetime",
    message: `expired ExecutionWorkspace "${workspace}" at ${at}: created at ${created}, past the ${minutes} minutes of lifetime ExecutionWorkspaceClass "${className}" allows`,
    annotations: { [EXPIRED_AT]: at },
  };
}

/** The whole response: Berth's annotations applied to each workspace it changes, an event per change. */
function operationResponse(
  at: string,
  acted: Acted[],
  refused: { workspace: string; message: string }[] = [],
  left: { deferred: number; unlistedRefusals: number; max?: number } = { deferred: 0, unlistedRefusals: 0 },
): RunFunctionResponse {
  return {
    conditions: [],
    meta: { tag: "test", ttl: { seconds: 60, nanos: 0 } },
    desired: {
      resources: Object.fromEntries(
        acted.map((a) => [a.workspace, { resource: { apiVersion: API, kind: "ExecutionWorkspace", metadata: { name: a.workspace, annotations: a.annotations } }, connectionDetails: {}, ready: 0 }]),
      ),
    },
    results: [
      ...acted.map((a) => ({ severity: Severity.SEVERITY_NORMAL, message: a.message })),
      ...refused.map((r) => ({ severity: Severity.SEVERITY_WARNING, message: `left ExecutionWorkspace "${r.workspace}" alone: ${r.message}` })),
      ...(left.deferred > 0
        ? [{ severity: Severity.SEVERITY_NORMAL, message: `${left.deferred} more ExecutionWorkspaces are due for a change; this run made ${acted.length}, the most one run makes (maxChangesPerRun), and the next run makes the rest` }]
        : []),
      ...(left.unlistedRefusals > 0
        ? [{ severity: Severity.SEVERITY_WARNING, message: `left ${left.unlistedRefusals} more ExecutionWorkspaces alone for the same kinds of reasons; not listed (at most ${left.max} per run)` }]
        : []),
    ],
    output: {
      acted: acted.map(({ workspace, rule, message }) => ({ workspace, rule, at, message })),
      refused: refused.map((r) => ({ workspace: r.workspace, rule: "IdleTimeout", message: r.message })),
      deferred: left.deferred,
      unlistedRefusals: left.unlistedRefusals,
    },
  } as unknown as RunFunctionResponse;
}

export function lifecycleCases(now: Date, at = rfc3339(now)): LifecycleCase[] {
  const ago = (m: number) => minutesBefore(now, m);
  const secondsAgo = (seconds: number) => rfc3339(new Date(now.getTime() - seconds * 1000));
  return [
    {
      name: "IdleLongerThanTheClassAllowsIsSuspended",
      reason: "A running Durable workspace whose last activity is older than its class's idleTimeoutMinutes gets Berth's suspension annotations, and an event says why.",
      req: operationRequest([workspace(now, "idle", "sandbox-session", { [LAST_ACTIVITY]: ago(20) })]),
      want: operationResponse(at, [idle(at, "idle", ago(20))]),
    },
    {
      name: "ActiveWorkspacesAreLeftAlone",
      reason: "Activity within the idle timeout, or a workspace younger than it that never signalled, changes nothing.",
      req: operationRequest([workspace(now, "busy", "sandbox-session", { [LAST_ACTIVITY]: ago(5) }), workspace(now, "new", "sandbox-session", {}, (w) => (w.metadata.creationTimestamp = ago(10)))]),
      want: operationResponse(at, []),
    },
    {
      name: "NeverSignalledIsIdleSinceCreation",
      reason: "A workspace that never wrote an activity signal has been idle since it was created.",
      req: operationRequest([workspace(now, "silent", "sandbox-session")]),
      want: operationResponse(at, [idle(at, "silent", ago(120))]),
    },
    {
      name: "ClassesThatForbidSuspendAreNeverTouched",
      reason: "An Ephemeral class keeps no files (its workspace's action here is Keep) and Agent Substrate suspends through its own API: the rule is recorded as refused, and nothing is applied to those workspaces.",
      req: operationRequest([workspace(now, "scratch", "ephemeral-session", { [LAST_ACTIVITY]: ago(60) }), workspace(now, "actor", "substrate-session", { [LAST_ACTIVITY]: ago(60) })]),
      want: operationResponse(
        at,
        [],
        [
          { workspace: "scratch", message: `idle since ${ago(60)}, past 15 idle minutes; left running: ExecutionWorkspaceClass "ephemeral-session" is Ephemeral and the workspace's onDetach action is Keep` },
          { workspace: "actor", message: `idle since ${ago(60)}, past ${(SUBSTRATE.spec as any).lifecycle.idleTimeoutMinutes} idle minutes; left running: ExecutionWorkspaceClass "substrate-session" runs on agent-substrate, whose suspend Berth cannot declare` },
        ],
      ),
    },
    {
      name: "IdleEphemeralWorkspaceWhoseActionIsDeleteIsReleased",
      reason: "An Ephemeral class keeps no files: when the workspace's onDetach action is Delete, the idle rule releases it (its runtime and Namespace go) instead of suspending it.",
      req: operationRequest([workspace(now, "scratch", "ephemeral-session", { [LAST_ACTIVITY]: ago(60) }, (w) => (w.spec.onDetach = "Delete"))]),
      want: operationResponse(at, [
        {
          workspace: "scratch",
          rule: "IdleTimeout",
          message: `released ExecutionWorkspace "scratch" at ${at}: idle since ${ago(60)}, past the 15 idle minutes ExecutionWorkspaceClass "ephemeral-session" allows; the class keeps no files and the workspace's onDetach action is Delete`,
          annotations: { [RELEASED_AT]: at },
        },
      ]),
    },
    {
      name: "OnlyRunningWorkspacesAreJudged",
      reason: "Already suspended (by Berth or declared in spec), still provisioning, or being deleted: none is changed, however long idle.",
      req: operationRequest([
        workspace(now, "held", "sandbox-session", { [LAST_ACTIVITY]: ago(60), [SUSPENDED_AT]: ago(40), [SUSPENDED_BY]: "IdleTimeout" }),
        workspace(now, "declared", "sandbox-session", {}, (w) => (w.spec.desiredState = "Suspended")),
        workspace(now, "provisioning", "sandbox-session", {}, (w) => (w.status.phase = "Provisioning")),
        workspace(now, "deleting", "sandbox-session", {}, (w) => (w.metadata.deletionTimestamp = ago(1))),
        workspace(now, "orphan", "no-such-class"),
      ]),
      want: operationResponse(at, []),
    },
    {
      name: "ResumedThenIdleAgainIsSuspendedAgain",
      reason: "Activity after a suspension lifted it; idle again past the timeout since that activity, the workspace is suspended anew.",
      req: operationRequest([workspace(now, "again", "sandbox-session", { [LAST_ACTIVITY]: ago(30), [SUSPENDED_AT]: ago(60), [SUSPENDED_BY]: "IdleTimeout" })]),
      want: operationResponse(at, [idle(at, "again", ago(30))]),
    },
    {
      name: "CompressedMinutesComeFromTheInput",
      reason: "secondsPerMinute: 1 makes the class's 15 idle minutes 15 seconds and its 1440 minutes of lifetime 24 minutes, through the Operation's input alone.",
      req: operationRequest(
        [
          workspace(now, "quick", "sandbox-session", { [LAST_ACTIVITY]: secondsAgo(20) }, (w) => (w.metadata.creationTimestamp = secondsAgo(60))),
          workspace(now, "quicker", "sandbox-session", { [LAST_ACTIVITY]: secondsAgo(10) }, (w) => (w.metadata.creationTimestamp = secondsAgo(60))),
          workspace(now, "old", "sandbox-session", { [LAST_ACTIVITY]: secondsAgo(1) }, (w) => (w.metadata.creationTimestamp = ago(25))),
        ],
        { secondsPerMinute: 1 },
      ),
      want: operationResponse(at, [idle(at, "quick", secondsAgo(20)), expired(at, "old", ago(25))]),
    },
    {
      name: "PastItsMaximumLifetimeIsExpiredWhateverItsPhase",
      reason: "Older than the class's maxLifetimeMinutes: expired, active or not, suspended or not, before any other rule; the expiry annotation is Berth's alone.",
      req: operationRequest([
        workspace(now, "busy-but-old", "sandbox-session", { [LAST_ACTIVITY]: ago(1) }, (w) => (w.metadata.creationTimestamp = ago(1500))),
        workspace(now, "suspended-and-old", "sandbox-session", { [SUSPENDED_AT]: ago(100), [SUSPENDED_BY]: "IdleTimeout" }, (w) => ((w.metadata.creationTimestamp = ago(1441)), (w.status.phase = "Suspended"))),
        workspace(now, "scratch-and-old", "ephemeral-session", {}, (w) => (w.metadata.creationTimestamp = ago(1440))),
        workspace(now, "young", "sandbox-session", { [LAST_ACTIVITY]: ago(1) }, (w) => (w.metadata.creationTimestamp = ago(1439))),
      ]),
      want: operationResponse(at, [expired(at, "busy-but-old", ago(1500)), expired(at, "suspended-and-old", ago(1441)), expired(at, "scratch-and-old", ago(1440), 1440, "ephemeral-session")]),
    },
    {
      name: "OneRunMakesAtMostMaxChangesPerRun",
      reason:
        "Five workspaces idle and four refused, with maxChangesPerRun 2: the run suspends the first two and lists two refusals, and says how many it left; the next run decides the rest again.",
      req: operationRequest(
        [
          ...["idle-a", "idle-b", "idle-c", "idle-d", "idle-e"].map((n) => workspace(now, n, "sandbox-session", { [LAST_ACTIVITY]: ago(30) })),
          ...["scratch-a", "scratch-b", "scratch-c", "scratch-d"].map((n) => workspace(now, n, "ephemeral-session", { [LAST_ACTIVITY]: ago(30) })),
        ],
        { maxChangesPerRun: 2 },
      ),
      want: operationResponse(
        at,
        [idle(at, "idle-a", ago(30)), idle(at, "idle-b", ago(30))],
        ["scratch-a", "scratch-b"].map((workspace) => ({
          workspace,
          message: `idle since ${ago(30)}, past 15 idle minutes; left running: ExecutionWorkspaceClass "ephemeral-session" is Ephemeral and the workspace's onDetach action is Keep`,
        })),
        { deferred: 3, unlistedRefusals: 2, max: 2 },
      ),
    },
    {
      name: "ExpiryIsFinal",
      reason: "An expired workspace is never judged again: no rule acts on it, and activity does not bring it back.",
      req: operationRequest([workspace(now, "expired", "sandbox-session", { [EXPIRED_AT]: ago(10), [LAST_ACTIVITY]: ago(1) }, (w) => (w.metadata.creationTimestamp = ago(1500)))]),
      want: operationResponse(at, []),
    },
  ];
}
