// What the collector serves at GET /evidence once the runtime has exited, and what the export
// accepts from it: one schema for both ends.
import { z } from "zod";

export const collectedEvidenceSchema = z.strictObject({
  /** The checked-out commit the patch applies to; null when there was no checkout. */
  commit: z
    .string()
    .regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/)
    .nullable(),
  /**
   * git diff's exact bytes, base64 (a patch holds whatever bytes the files and their names hold,
   * which a JSON string cannot): `git apply` takes it on a clean checkout of `commit`. Null when
   * the changes could not be collected (`notCollected` says why).
   */
  patch: z.base64().nullable(),
  notCollected: z.string().nullable(),
  /** Changes the patch does not carry, named; what it carries still applies. */
  leftOut: z.array(z.strictObject({ path: z.string(), reason: z.string() })),
  files: z.strictObject({ added: z.int().min(0), modified: z.int().min(0), deleted: z.int().min(0) }),
  /** Reported by the runtime; null when it wrote none. */
  verification: z.strictObject({ exitCode: z.int(), output: z.string() }).nullable(),
  collectedAt: z.iso.datetime(),
});
export type CollectedEvidence = z.output<typeof collectedEvidenceSchema>;

/** The collector's answer while the runtime runs (503). */
export const WAITING = { waiting: "the runtime has not finished" } as const;

/** The collector's answer when it could not collect (500); computed once, so final. */
export const collectorErrorSchema = z.object({ error: z.string() });
