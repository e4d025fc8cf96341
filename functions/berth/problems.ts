/**
 * Why a render cannot go ahead.
 * - `fetching`: Berth has asked Crossplane for a cluster object it has not been given yet.
 *   Crossplane always calls again with the answer (its requirement loop), and only the last
 *   response of that loop counts, so this answer is never final.
 * - `invalid`: the documents contradict each other or the profile; fixing a document is the
 *   only way forward, so the answer is always a fatal result.
 * - `waiting`: something Berth reads from the cluster is not there.
 * - `refused`: the documents are valid but a rule of the package forbids what they ask.
 * Waiting and refused workspaces that own no objects yet say so in status; once objects exist
 * they become fatal results, so that Crossplane keeps every existing object unchanged.
 */
export type Problem =
  | { type: "fetching"; reason: string; message: string }
  | { type: "invalid"; message: string }
  | { type: "waiting"; reason: string; message: string }
  | { type: "refused"; reason: string; message: string };
