import type { KubeObject } from "../model.js";
import { subsetDiff } from "../observe/subset.js";

/**
 * `rendered` with the values `observed` has: the same fields (so that Crossplane's apply claims
 * no field it did not before, and drops none it keeps), but what is running. Fields `observed`
 * lacks are left out; list items are matched by name where they have one (containers, env,
 * volumes), else by position.
 */
function asRunning(rendered: unknown, observed: unknown): unknown {
  if (Array.isArray(rendered)) {
    if (!Array.isArray(observed)) return observed;
    const named = (x: unknown) => (x !== null && typeof x === "object" && "name" in x ? (x as { name: unknown }).name : undefined);
    return rendered.flatMap((item, i) => {
      const match = named(item) === undefined ? observed[i] : observed.find((o) => named(o) === named(item));
      return match === undefined ? [] : [asRunning(item, match)];
    });
  }
  if (rendered !== null && typeof rendered === "object") {
    if (observed === null || typeof observed !== "object" || Array.isArray(observed)) return observed;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rendered)) {
      const o = (observed as Record<string, unknown>)[k];
      if (o !== undefined) out[k] = asRunning(v, o);
    }
    return out;
  }
  return observed;
}

/**
 * A workload whose pod template cannot reach the pod it runs keeps the template it runs with:
 * Kubernetes refuses any change to a Job's template once the Job exists (applying one would fail
 * every reconcile of the workspace until the change is undone), and agent-sandbox never rolls a
 * changed podTemplate out to a running pod (so the Sandbox would claim a pod it does not run).
 * When the profile or the document now asks for another template (a new runtime image, say),
 * `running` (the observed workload, while its pod runs) keeps the fields Berth always applies,
 * with the values that run, and a warning says what was not applied and `until` when. Only what
 * Berth renders is compared: the API server adds defaults.
 */
export function keepRunningTemplate(
  rendered: KubeObject,
  running: KubeObject | undefined,
  field: "template" | "podTemplate",
  until: string,
): { workload: KubeObject; warning?: string } {
  const runs = (running?.spec as Record<string, unknown> | undefined)?.[field];
  if (runs === undefined) return { workload: rendered };
  const template = (rendered.spec as Record<string, unknown>)[field];
  const changes = subsetDiff(template, runs, `spec.${field}`);
  if (changes.length === 0) return { workload: rendered };
  return {
    workload: { ...rendered, spec: { ...(rendered.spec as object), [field]: asRunning(template, runs) } },
    warning: `the runtime ${rendered.kind} keeps the pod template it runs with; not applied ${until} (expected: what the profile and document now ask for, found: what runs): ${changes.slice(0, 3).join("; ")}${changes.length > 3 ? `; and ${changes.length - 3} more` : ""}`,
  };
}
