import { specHash } from "../hash.js";
import type { CompositeRenderer, Verdict } from "../model.js";
import { resolveProfile } from "../resolve/profile.js";
import { withReadiness } from "../observe/readiness.js";
import { renderClassAdmission } from "../render/class-admission.js";
import { RequiredResources } from "../resolve/required.js";
import { executionWorkspaceClassSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import type { ExecutionWorkspaceClassSpec } from "../schema/execution.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import { quantityValue } from "../schema/quantity.js";
import type { ExecutionWorkspaceClassStatus } from "../schema/status.js";
import { fatal, stalled } from "../respond/verdicts.js";

/** Everything a class promises must be something its profile has reviewed. */
function classProblems(spec: ExecutionWorkspaceClassSpec, profileName: string, profile: WorkspaceProfileSpec): string[] {
  const problems: string[] = [];
  const profileRef = `WorkspaceProfile "${profileName}"`;
  const runtime = profile.runtimes.find((r) => r.name === spec.runtime.profile);
  if (runtime === undefined) problems.push(`spec.runtime.profile: ${profileRef} offers no runtime "${spec.runtime.profile}"`);
  if (runtime !== undefined && spec.provider === "agent-substrate" && !runtime.image.includes("@sha256:")) {
    problems.push(`spec.runtime.profile: Agent Substrate needs images pinned by digest (changing an image invalidates snapshots), but runtime "${runtime.name}" of ${profileRef} is ${runtime.image}`);
  }
  spec.permits.destinations.forEach((d, i) => {
    if (!profile.destinations.some((r) => r.name === d)) problems.push(`spec.permits.destinations[${i}]: ${profileRef} reviews no destination "${d}"`);
  });
  if (quantityValue(spec.permits.storage.max) > quantityValue(profile.storage.maxSize)) {
    problems.push(`spec.permits.storage.max: ${spec.permits.storage.max} exceeds the maxSize ${profile.storage.maxSize} of ${profileRef}`);
  }
  if (quantityValue(spec.permits.storage.default) > quantityValue(spec.permits.storage.max)) problems.push("spec.permits.storage.default: exceeds spec.permits.storage.max");
  for (const r of ["cpu", "memory"] as const) {
    if (quantityValue(spec.permits.resources.max[r]) > quantityValue(profile.limits.max[r])) {
      problems.push(`spec.permits.resources.max.${r}: ${spec.permits.resources.max[r]} exceeds the max ${profile.limits.max[r]} of ${profileRef}`);
    }
    if (quantityValue(spec.permits.resources.default[r]) > quantityValue(spec.permits.resources.max[r])) problems.push(`spec.permits.resources.default.${r}: exceeds spec.permits.resources.max.${r}`);
  }
  return problems;
}

/**
 * ExecutionWorkspaceClass renders its status (whether everything it offers is reviewed by its
 * profile, and the hash workspaces pin when they bind to it) and its admission: the binding
 * that refuses options it does not permit, and the role that grants `use` on it.
 */
export const renderExecutionWorkspaceClass: CompositeRenderer = (observed): Verdict => {
  const required = new RequiredResources(observed);
  const parsed = parseDocument(executionWorkspaceClassSchema, observed.composite);
  if (!parsed.ok) return fatal(observed, required.requirements, `invalid document: ${parsed.problems.join("; ")}`);
  const { spec } = parsed.value;
  const classHash = specHash(spec);

  const profile = resolveProfile(spec.profileRef.name, required);
  if (profile.type !== "found") return stalled(observed, required.requirements, profile, { classHash });
  const problems = classProblems(spec, profile.name, profile.spec);
  if (problems.length > 0) return fatal(observed, required.requirements, problems.join("; "));

  const status: ExecutionWorkspaceClassStatus = {
    phase: "Ready",
    reason: "Validated",
    message: `class is valid; workspaces run on ${spec.provider}`,
    classHash,
    profileHash: specHash(profile.spec),
  };
  const resources = withReadiness(renderClassAdmission(parsed.value.metadata.name), observed.resources);
  return { type: "rendered", requirements: required.requirements, resources, status, warnings: [] };
};
