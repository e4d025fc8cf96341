// The evidence as one OCI artifact (an image manifest, OCI image spec v1.1, with an artifactType
// and the empty config): the outcome, the verification result if the runtime reported one, and
// the proposed changes as a patch, each a layer titled like the file it would be pulled as
// (`oras pull` writes each layer under its title). Every byte follows from the inputs, so an
// export retried with the same evidence pushes the same digest.
import { createHash } from "node:crypto";
import type { CollectedEvidence } from "./collected.js";
import type { Outcome } from "./result.js";

export const ARTIFACT_TYPE = "application/vnd.berth.evidence.v1";
export const MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json";
export const OUTCOME_MEDIA_TYPE = "application/vnd.berth.evidence.outcome.v1+json";
export const VERIFICATION_MEDIA_TYPE = "application/vnd.berth.evidence.verification.v1+json";
export const PATCH_MEDIA_TYPE = "text/x-diff";
const EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json";
const TITLE = "org.opencontainers.image.title";
export const PATCH_TRUNCATED = "dev.berth.evidence.patch-truncated";
export const CHANGES_NOT_COLLECTED = "dev.berth.evidence.changes-not-collected";

export interface Blob {
  readonly mediaType: string;
  readonly digest: string;
  readonly content: Buffer;
}

export interface EvidenceArtifact {
  /** The manifest's exact bytes: its digest is theirs. */
  readonly manifest: Buffer;
  readonly digest: string;
  /** The config first, then the layers in order. */
  readonly blobs: readonly Blob[];
}

export interface ArtifactInputs {
  readonly workspaceID: string;
  readonly source: { readonly repository: string; readonly revision: string };
  readonly outcome: Outcome;
  /** What the collector served; none when there was no collector to ask (the outcome alone is pushed). */
  readonly evidence: CollectedEvidence | undefined;
}

export function sha256(content: Buffer): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

const blob = (mediaType: string, content: Buffer): Blob => ({ mediaType, digest: sha256(content), content });

export function evidenceArtifact(inputs: ArtifactInputs): EvidenceArtifact {
  const { evidence } = inputs;
  const config = blob(EMPTY_MEDIA_TYPE, Buffer.from("{}"));
  const layers: { blob: Blob; title: string; annotations?: Record<string, string> }[] = [];
  const outcome = {
    workspaceID: inputs.workspaceID,
    source: { repository: inputs.source.repository, revision: inputs.source.revision, commit: evidence?.commit ?? null },
    outcome: inputs.outcome,
  };
  layers.push({ blob: blob(OUTCOME_MEDIA_TYPE, Buffer.from(JSON.stringify(outcome))), title: "outcome.json" });
  if (evidence?.verification) {
    const { exitCode, output } = evidence.verification;
    layers.push({ blob: blob(VERIFICATION_MEDIA_TYPE, Buffer.from(JSON.stringify({ exitCode, output, reportedBy: "runtime" }))), title: "verification.json" });
  }
  if (evidence) {
    layers.push({
      blob: blob(PATCH_MEDIA_TYPE, Buffer.from(evidence.patch, "utf8")),
      title: "changes.patch",
      ...(evidence.patchTruncated ? { annotations: { [PATCH_TRUNCATED]: "true" } } : {}),
    });
  }
  const descriptor = (b: Blob, annotations?: Record<string, string>) => ({ mediaType: b.mediaType, digest: b.digest, size: b.content.length, ...(annotations ? { annotations } : {}) });
  // Built in a fixed key order and serialized compactly: the same inputs give the same bytes.
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      artifactType: ARTIFACT_TYPE,
      config: descriptor(config),
      layers: layers.map((l) => descriptor(l.blob, { [TITLE]: l.title, ...l.annotations })),
      annotations: {
        // When the evidence was collected, not when it was pushed: a retried push is the same artifact.
        ...(evidence ? { "org.opencontainers.image.created": evidence.collectedAt } : {}),
        "dev.berth.workspace-id": inputs.workspaceID,
        // Without a collector there are no changes to carry, and the artifact says so.
        ...(evidence ? {} : { [CHANGES_NOT_COLLECTED]: "the runtime never ran, or its collector's time ran out" }),
      },
    }),
  );
  return { manifest, digest: sha256(manifest), blobs: [config, ...layers.map((l) => l.blob)] };
}
