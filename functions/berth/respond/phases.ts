// A workspace's phase is either at rest (where it stays until something changes) or on its way
// somewhere. Both the response TTL and the status fields that change under a moving workspace
// tell the two apart.

/** The phases a workspace rests in: Ready, Suspended, Released, Expired, Failed. */
const AT_REST = new Set(["Ready", "Suspended", "Released", "Expired", "Failed"]);

/** Whether a workspace in this phase is at rest; a document without a phase (profiles, classes, checkpoints) is. */
export const atRest = (phase: unknown): boolean => typeof phase !== "string" || AT_REST.has(phase);
