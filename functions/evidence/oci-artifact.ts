// The evidence as one OCI artifact (an image manifest, OCI image spec v1.1, with an artifactType
// and the empty config): the outcome, the verification result if the runtime reported one, and
// the proposed changes as a patch, each a layer titled like the file it would be pulled as
// (`oras pull` writes each layer under its title). Every byte follows from the inputs, so an
// export retried with the same evidence pushes the same digest.
import { createHash } from "node:crypto";
import type { CollectedEvidence } from "./collected.js";
import type { Outcome } from "../contracts/evidence-result.js";

export const ARTIFACT_TYPE = "application/vnd.berth.evidence.v1";
export const MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json";
export const OUTCOME_MEDIA_TYPE = "application/vnd.berth.evidence.outcome.v1+json";
export const VERIFICATION_MEDIA_TYPE = "application/vnd.berth.evidence.verification.v1+json";
export const PATCH_MEDIA_TYPE = "text/x-diff";
const EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json";
const TITLE = "org.opencontainers.image.title";
/** On the patch's layer: how many changes it does not carry (outcome.json's changes.leftOut names them). */
export const CHANGES_LEFT_OUT = "dev.berth.evidence.changes-left-out";
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
  /** Why there is no evidence, when there is none. */
  readonly notCollected?: string;
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
    // What the patch carries is in changes.patch; what it does not, and why, is named here.
    changes: evidence ? { files: evidence.files, leftOut: evidence.leftOut, notCollected: evidence.notCollected } : { notCollected: notCollected(inputs) },
  };
  layers.push({ blob: blob(OUTCOME_MEDIA_TYPE, Buffer.from(JSON.stringify(outcome))), title: "outcome.json" });
  if (evidence?.verification) {
    const { exitCode, output } = evidence.verification;
    layers.push({ blob: blob(VERIFICATION_MEDIA_TYPE, Buffer.from(JSON.stringify({ exitCode, output, reportedBy: "runtime" }))), title: "verification.json" });
  }
  if (evidence?.patch != null) {
    layers.push({
      blob: blob(PATCH_MEDIA_TYPE, Buffer.from(evidence.patch, "base64")),
      title: "changes.patch",
      ...(evidence.leftOut.length > 0 ? { annotations: { [CHANGES_LEFT_OUT]: String(evidence.leftOut.length) } } : {}),
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
        // Without a patch the artifact says why, in one line; outcome.json says it too.
        ...(evidence?.patch != null ? {} : { [CHANGES_NOT_COLLECTED]: notCollected(inputs) }),
      },
    }),
  );
  return { manifest, digest: sha256(manifest), blobs: [config, ...layers.map((l) => l.blob)] };
}

function notCollected(inputs: ArtifactInputs): string {
  return inputs.evidence?.notCollected ?? inputs.notCollected ?? "the runtime never ran, or its collector's time ran out";
}
