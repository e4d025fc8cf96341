import type { CompositeRenderer } from "../model.js";
import { renderDeveloperWorkspace } from "./developer-workspace.js";
import { renderWorkspaceProfile } from "./workspace-profile.js";

/** Which renderer answers for which kind of composite resource. */
export const RENDERERS: Readonly<Record<string, CompositeRenderer>> = {
  WorkspaceProfile: renderWorkspaceProfile,
  DeveloperWorkspace: renderDeveloperWorkspace,
};
