// The verification result, as reported by the runtime: it runs the workspace's verification
// command and writes `{"exitCode": n, "output": "..."}` to BERTH_VERIFICATION_RESULT. The
// collector only carries it; that it is the runtime's word is said wherever it goes
// (reportedBy: "runtime" in the artifact).
import fs from "node:fs";
import { open, realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { describeIssues } from "../contracts/parse-document.js";

/** The output the evidence keeps, in bytes of UTF-8. */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/** A larger file is not read: the output is cut to 64 KiB anyway, even JSON-escaped. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

export const verificationFileSchema = z.object({
  exitCode: z.int(),
  output: z.string(),
});

export interface Verification {
  exitCode: number;
  output: string;
}

/** The result, null when the runtime wrote none; `problem` says why a file that exists was not used. */
export type ReadVerification = { verification: Verification | null; problem?: string };

export async function readVerification(file: string): Promise<ReadVerification> {
  let text: string;
  try {
    // The runtime owns the folder: it may have put a link where the file or its folder should be.
    if ((await realpath(dirname(file))) !== dirname(file)) return { verification: null, problem: `${dirname(file)} is a symbolic link or under one; not followed` };
    const handle = await open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return { verification: null, problem: `${file} is not a regular file` };
      if (stat.size > MAX_FILE_BYTES) return { verification: null, problem: `${file} is ${stat.size} bytes, more than ${MAX_FILE_BYTES}` };
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { verification: null };
    if (code === "ELOOP") return { verification: null, problem: `${file} is a symbolic link; not followed` };
    return { verification: null, problem: `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  return parseVerification(text, file);
}

export function parseVerification(text: string, file = "the verification result"): ReadVerification {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { verification: null, problem: `${file} is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = verificationFileSchema.safeParse(json);
  if (!parsed.success) return { verification: null, problem: `${file}: ${describeIssues(parsed.error.issues).join("; ")}` };
  return { verification: { exitCode: parsed.data.exitCode, output: firstBytes(parsed.data.output, MAX_OUTPUT_BYTES) } };
}

/** At most `max` bytes of UTF-8, cut before a character rather than through it. */
export function firstBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  let end = max;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that would be cut.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
