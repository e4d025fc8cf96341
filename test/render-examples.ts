// Every example as `npm run render` and `crossplane render` are given it: the document, and the
// cluster objects its required resources resolve to. test/unit/render-output.test.ts checks
// npm run render against test/golden/crossplane-render-<name>.yaml; test/conformance/crossplane-cli.ts
// produces those files with the real Crossplane CLI and checks they still match.

// What each kind's required resources resolve to. Each example gets only objects of other
// kinds and names: render's fake cluster would otherwise confuse them with the XR itself.
const PROFILE_INPUTS = ["examples/profile.yaml", "examples/cluster/storageclass.yaml", "examples/cluster/services.yaml"];
const CLASS_INPUTS = ["examples/class-sandbox.yaml", "examples/class-substrate.yaml"];
const WORKSPACE_INPUTS = [...PROFILE_INPUTS, ...CLASS_INPUTS, "examples/cluster/checkpoint-ready.yaml"];

const dw = "compositions/developerworkspaces.yaml";
const ew = "compositions/executionworkspaces.yaml";

/**
 * `converge`: a workspace's first reconcile creates only its Namespace, so its converged render
 * (npm run render --converge) is checked too, against `crossplane render -o <the previous
 * reconcile's objects>`, in test/golden/crossplane-render-<name>-converged.yaml.
 */
export const RENDER_EXAMPLES: { name: string; document: string; composition: string; required: string[]; converge?: boolean }[] = [
  { name: "persistent", document: "examples/developerworkspace-persistent.yaml", composition: dw, required: PROFILE_INPUTS, converge: true },
  { name: "ephemeral", document: "examples/developerworkspace-ephemeral.yaml", composition: dw, required: PROFILE_INPUTS, converge: true },
  { name: "review", document: "examples/developerworkspace-review.yaml", composition: dw, required: PROFILE_INPUTS, converge: true },
  { name: "pending", document: "examples/developerworkspace-persistent.yaml", composition: dw, required: [] },
  { name: "profile", document: "examples/profile.yaml", composition: "compositions/workspaceprofiles.yaml", required: ["examples/cluster/storageclass.yaml"] },
  { name: "class-sandbox", document: "examples/class-sandbox.yaml", composition: "compositions/executionworkspaceclasses.yaml", required: PROFILE_INPUTS },
  { name: "class-substrate", document: "examples/class-substrate.yaml", composition: "compositions/executionworkspaceclasses.yaml", required: PROFILE_INPUTS },
  { name: "execution-sandbox", document: "examples/executionworkspace-sandbox.yaml", composition: ew, required: WORKSPACE_INPUTS, converge: true },
  { name: "execution-substrate", document: "examples/executionworkspace-substrate.yaml", composition: ew, required: WORKSPACE_INPUTS, converge: true },
  { name: "execution-restore", document: "examples/executionworkspace-restore.yaml", composition: ew, required: WORKSPACE_INPUTS, converge: true },
  { name: "execution-fork", document: "examples/executionworkspace-fork.yaml", composition: ew, required: WORKSPACE_INPUTS, converge: true },
  { name: "checkpoint", document: "examples/checkpoint.yaml", composition: "compositions/workspacecheckpoints.yaml", required: ["examples/executionworkspace-sandbox.yaml", ...CLASS_INPUTS] },
];
