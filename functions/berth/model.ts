/**
 * The shapes that flow through a render: what Crossplane observed, what Berth asks it to
 * fetch, and what Berth wants to exist. They are plain data so that every rule can be tested
 * with a function call and no gRPC. Nearly every module reads them, so this one imports none.
 */

/** A Kubernetes object as JSON. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
};

/** A cluster object Berth needs to read, fetched by Crossplane as a required resource. */
export interface NamedRequirement {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The objects of a kind in a namespace that carry all of some labels. */
export interface LabelledRequirement {
  apiVersion: string;
  kind: string;
  namespace: string;
  matchLabels: Record<string, string>;
}

export type Requirement = NamedRequirement | LabelledRequirement;

/** Everything a render may look at, taken from one RunFunctionRequest. */
export interface Observed {
  /** The composite resource (XR) as it is in the cluster. */
  composite: KubeObject;
  /** Composed resources that exist, by composition resource name. */
  resources: Record<string, KubeObject>;
  /**
   * Required resources by requirement name. A missing key means Crossplane has not fetched
   * it yet; an empty list means it looked and found nothing.
   */
  required: Record<string, KubeObject[]>;
}

/** A composed resource Berth wants, and whether what was observed of it is ready. */
export interface DesiredResource {
  object: KubeObject;
  ready: boolean;
}

/**
 * A condition Berth sets on the workspace through its response, beside Crossplane's own Synced
 * and Ready: one question a person or a tool asks of a workspace, answered yes or no with a
 * reason. Messages change only when the answer does, so an idle workspace's status never moves.
 * conditions.ts makes each one.
 */
export interface WorkspaceCondition {
  type: "CapacityEnforced" | "EgressResolved" | "ClassBound" | "Suspended";
  status: boolean;
  reason: string;
  message: string;
}

/**
 * A render's answer. `rendered` replaces the whole desired state; `fatal` asks Crossplane to
 * change nothing at all, which is how Berth keeps existing objects when it cannot decide.
 */
export type Verdict =
  | {
      type: "rendered";
      requirements: Record<string, Requirement>;
      resources: Record<string, DesiredResource>;
      status: Record<string, unknown>;
      /** Overrides the XR's readiness; otherwise Crossplane derives it from the resources. */
      compositeReady?: boolean;
      /** Berth's own conditions on the XR. */
      conditions?: WorkspaceCondition[];
      warnings: string[];
    }
  | { type: "fatal"; requirements: Record<string, Requirement>; message: string };

/** Renders one kind of composite resource. Pure: the same request always yields the same verdict. */
export type CompositeRenderer = (observed: Observed) => Verdict;
