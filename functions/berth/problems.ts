/**
 * Why a render cannot go ahead.
 * - `invalid`: the documents contradict each other or the profile; fixing a document is the
 *   only way forward, so the answer is always a fatal result.
 * - `waiting`: something Berth reads from the cluster is not there (yet).
 * - `refused`: the documents are valid but a rule of the package forbids what they ask.
 * Waiting and refused workspaces that own no objects yet say so in status; once objects exist
 * they become fatal results, so that Crossplane keeps every existing object unchanged.
 */
export type Problem =
  | { type: "invalid"; message: string }
  | { type: "waiting"; reason: string; message: string }
  | { type: "refused"; reason: string; message: string };
