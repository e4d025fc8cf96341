import { evaluateCapacity } from "../resolve/capacity.js";
import { specHash } from "../hash.js";
import type { CompositeRenderer, Verdict } from "../model.js";
import { resolveStorageClass } from "../resolve/profile.js";
import { RequiredResources } from "../resolve/required.js";
import { workspaceProfileSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import { fatal } from "../respond/verdicts.js";

/**
 * WorkspaceProfile renders nothing but its own status: whether it is valid, what its storage
 * really enforces, and a hash that workspaces and classes can pin.
 */
export const renderWorkspaceProfile: CompositeRenderer = (observed): Verdict => {
  const required = new RequiredResources(observed);
  const parsed = parseDocument(workspaceProfileSchema, observed.composite);
  if (!parsed.ok) return fatal(observed, required.requirements, `invalid document: ${parsed.problems.join("; ")}`);
  const { spec } = parsed.value;
  const profileHash = specHash(spec);

  const storageClass = resolveStorageClass(spec, required);
  if (storageClass.type !== "found") {
    // A profile can only be waiting here (the StorageClass is not there yet); an operator
    // may create the class after the profile, so this is Pending, not Failed.
    const reason = storageClass.type === "invalid" ? "Invalid" : storageClass.reason;
    return {
      type: "rendered",
      requirements: required.requirements,
      resources: {},
      status: { phase: "Pending", reason, message: storageClass.message, profileHash },
      compositeReady: false,
      warnings: [storageClass.message],
    };
  }
  const capacity = evaluateCapacity(spec.storage, storageClass.object);
  return {
    type: "rendered",
    requirements: required.requirements,
    resources: {},
    status: {
      phase: "Ready",
      reason: "Validated",
      message: capacity.conforming
        ? "profile is valid and accepts persistent workspaces"
        : `profile is valid; persistent workspaces are refused: ${capacity.message}`,
      profileHash,
      capacity: {
        storageClassName: capacity.storageClassName,
        ...(capacity.provisioner ? { provisioner: capacity.provisioner } : {}),
        declared: capacity.declared,
        conforming: capacity.conforming,
        reason: capacity.reason,
        message: capacity.message,
      },
    },
    compositeReady: true,
    warnings: capacity.conforming ? [] : [capacity.message],
  };
};
