import type { CompositeRenderer } from "../model.js";
import { renderDeveloperWorkspace } from "./developer-workspace.js";
import { renderExecutionWorkspace } from "./execution-workspace.js";
import { renderExecutionWorkspaceClass } from "./execution-workspace-class.js";
import { renderWorkspaceCheckpoint } from "./workspace-checkpoint.js";
import { renderWorkspaceProfile } from "./workspace-profile.js";

/** Which renderer answers for which kind of composite resource. */
export const RENDERERS: Readonly<Record<string, CompositeRenderer>> = {
  WorkspaceProfile: renderWorkspaceProfile,
  DeveloperWorkspace: renderDeveloperWorkspace,
  ExecutionWorkspaceClass: renderExecutionWorkspaceClass,
  ExecutionWorkspace: renderExecutionWorkspace,
  WorkspaceCheckpoint: renderWorkspaceCheckpoint,
};
