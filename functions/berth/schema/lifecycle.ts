import { z } from "zod";
import { API_VERSION } from "./documents.js";

/**
 * The input of Berth's lifecycle Operation step. Its kind is how the function tells an
 * Operation's request from a composition's: an Operation has no observed composite.
 */
export const LIFECYCLE_RULES_KIND = "LifecycleRules";

export const lifecycleRulesSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(LIFECYCLE_RULES_KIND),
  metadata: z.looseObject({}).optional(),
  secondsPerMinute: z
    .int()
    .min(1)
    .max(60)
    .default(60)
    .describe("How long a lifecycle minute lasts, in seconds: 60 in production; fewer compresses every class's timeouts, for demonstrations and tests."),
  maxChangesPerRun: z
    .int()
    .min(1)
    .max(2000)
    .default(500)
    .describe(
      "The most workspaces one run changes, and the most refusals it lists; the rest wait for the next run. Keeps the response and the Operation's status small however many workspaces fall due at once.",
    ),
});

export type LifecycleRules = z.output<typeof lifecycleRulesSchema>;
