// What the export reports: the one line of JSON it writes as its container's termination message,
// the artifact it pushed or why it could not. Berth's function parses it (from the pod's status)
// to record the evidence or say in status where the export stands, so this file imports zod and
// nothing from node: (the function's bundle imports it). The kubelet keeps at most 4,096 bytes.
import { z } from "zod";

/** RFC 3339 as Kubernetes writes it: UTC, `Z`, fractional seconds allowed. */
const timestamp = z.iso.datetime();

/** One line: a ConfigMap value Berth copies into status must not break a line-oriented reader. */
const oneLine = (max: number) => z.string().max(max).regex(/^[^\r\n]*$/, "must be one line");

/** The run's outcome as Berth recorded it (status.outcome): exported exactly as given. */
export const outcomeSchema = z.strictObject({
  result: z.enum(["Succeeded", "Failed"]),
  reason: oneLine(64),
  message: oneLine(512).optional(),
  finishedAt: z.string().max(64).optional(),
});
export type Outcome = z.output<typeof outcomeSchema>;

/** Why an attempt failed. NoEvidence: the collector could not be reached or could not collect. */
export const failureReason = z.enum(["Unreachable", "Refused", "RegistryError", "TLSError", "NoEvidence"]);
export type FailureReason = z.output<typeof failureReason>;

/** The status keeps the first 1,024 characters of the output; the artifact holds up to 64 KiB. */
export const VERIFICATION_SUMMARY_CHARS = 1024;
export const MESSAGE_CHARS = 512;

export const exportedResultSchema = z.strictObject({
  state: z.literal("Exported"),
  /** host[:port]/path, as BERTH_EVIDENCE_REPOSITORY names it. */
  repository: z.string().min(1),
  tag: z.string().min(1),
  /** The manifest's digest: the artifact is <repository>@<digest>. */
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  exportedAt: timestamp,
  verification: z.strictObject({ exitCode: z.int(), output: z.string().max(VERIFICATION_SUMMARY_CHARS) }).nullable(),
  /** Push attempts, this one included. */
  attempts: z.int().min(1),
});

export const failedResultSchema = z.strictObject({
  state: z.literal("Failed"),
  reason: failureReason,
  message: oneLine(MESSAGE_CHARS),
  /** Attempts that failed so far. */
  attempts: z.int().min(1),
  lastAttemptAt: timestamp,
});

export const exportResultSchema = z.discriminatedUnion("state", [exportedResultSchema, failedResultSchema]);
export type ExportResult = z.output<typeof exportResultSchema>;
export type ExportedResult = z.output<typeof exportedResultSchema>;
export type FailedResult = z.output<typeof failedResultSchema>;

/** A string to at most `max` characters, never splitting a surrogate pair. */
export function firstChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** RFC 3339 in UTC at second precision, as Kubernetes writes its timestamps. */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
