// Malformed and hostile documents: each gets one fatal result that names the offending field,
// and the response's desired state is exactly the request's, so no observed object is dropped.
import { Severity } from "@crossplane-org/function-sdk-typescript";
import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { OBSERVED_NAMESPACE, OBSERVED_VOLUME } from "../cases.js";
import { ALL_REQUIRED, edited, PERSISTENT, PROFILE, request, resource } from "../fixtures.js";

type Doc = KubeObject & { spec: Record<string, any> };

/** [what is wrong, how to break the persistent example, the field the message must name] */
const MALFORMED: [string, (w: Doc) => void, string][] = [
  ["spec missing", (w) => delete (w as Partial<Doc>).spec, "spec:"],
  ["workspaceID a number", (w) => (w.spec.workspaceID = 42), "spec.workspaceID:"],
  ["workspaceID upper case", (w) => (w.spec.workspaceID = "Alice"), "spec.workspaceID:"],
  ["workspaceID too long", (w) => (w.spec.workspaceID = "a".repeat(41)), "spec.workspaceID:"],
  ["workspaceID a shell string", (w) => (w.spec.workspaceID = "a;rm -rf /"), "spec.workspaceID:"],
  ["name does not match workspaceID", (w) => (w.metadata!.name = "bob-xr"), "metadata.name:"],
  ["wrong apiVersion", (w) => (w.apiVersion = "workspaces.berth.dev/v1"), "apiVersion:"],
  ["profileRef missing", (w) => delete w.spec.profileRef, "spec.profileRef:"],
  ["profileRef.name empty", (w) => (w.spec.profileRef = { name: "" }), "spec.profileRef.name:"],
  ["owner missing", (w) => delete w.spec.owner, "spec.owner:"],
  ["owner.email invalid", (w) => (w.spec.owner.email = "not-an-email"), "spec.owner.email:"],
  ["owner.name with a newline", (w) => (w.spec.owner.name = "Alice\nX-Injected: yes"), "spec.owner.name:"],
  ["owner.name oversize", (w) => (w.spec.owner.name = "x".repeat(10_000)), "spec.owner.name:"],
  ["repository over plain http", (w) => (w.spec.source.repository = "http://github.com/example/payments.git"), "spec.source.repository:"],
  ["repository with embedded credentials", (w) => (w.spec.source.repository = "https://user:secret@github.com/example/payments.git"), "spec.source.repository:"],
  ["revision that is a git option", (w) => (w.spec.source.revision = "--upload-pack=touch /tmp/pwned"), "spec.source.revision:"],
  ["runtime.profile missing", (w) => (w.spec.runtime = {}), "spec.runtime.profile:"],
  ["storage.mode unknown", (w) => (w.spec.storage.mode = "tmpfs"), "spec.storage.mode:"],
  ["storage.size not a quantity", (w) => (w.spec.storage.size = "lots"), "spec.storage.size:"],
  ["storage.size in exponent form", (w) => (w.spec.storage.size = "1e12"), "spec.storage.size:"],
  ["storage.size negative", (w) => (w.spec.storage.size = -5), "spec.storage.size:"],
  ["resources.cpu zero", (w) => (w.spec.resources.cpu = "0"), "spec.resources.cpu:"],
  ["resources.memory missing", (w) => delete w.spec.resources.memory, "spec.resources.memory:"],
  ["unknown capability", (w) => (w.spec.capabilities.ssh = { destination: "github" }), "spec.capabilities:"],
  ["mcp not a list", (w) => (w.spec.capabilities.mcp = { name: "docs" }), "spec.capabilities.mcp:"],
  ["mcp entry without a name", (w) => delete w.spec.capabilities.mcp[0].name, "spec.capabilities.mcp[0].name:"],
  ["mcp names repeated", (w) => w.spec.capabilities.mcp.push({ name: "docs", destination: "docs-mcp" }), "spec.capabilities.mcp[1].name:"],
  ["mcp tools oversize", (w) => (w.spec.capabilities.mcp[0].tools = Array.from({ length: 65 }, (_, i) => `t${i}`)), "spec.capabilities.mcp[0].tools:"],
  ["kubernetes access unknown", (w) => (w.spec.capabilities.kubernetes = { access: "cluster-admin" }), "spec.capabilities.kubernetes.access:"],
  ["kubernetes access without destination", (w) => (w.spec.capabilities.kubernetes = { access: "edit" }), "spec.capabilities.kubernetes.destination:"],
  ["credential purpose unknown", (w) => (w.spec.credentials[1].purpose = "runtime"), "spec.credentials[1].purpose:"],
  ["credential key a path", (w) => (w.spec.credentials[0].secretRef.key = "../../token"), "spec.credentials[0].secretRef.key:"],
  ["too many credentials", (w) => (w.spec.credentials = Array.from({ length: 17 }, (_, i) => ({ name: `c${i}`, purpose: "mcp", secretRef: { name: "s", key: "k" } }))), "spec.credentials:"],
  ["two git credentials", (w) => w.spec.credentials.push({ name: "second", purpose: "git", secretRef: { name: "s", key: "k" } }), "spec.credentials:"],
  ["verification command empty", (w) => (w.spec.verification.command = []), "spec.verification.command:"],
  ["lifecycle.profile unknown", (w) => (w.spec.lifecycle.profile = "forever"), "spec.lifecycle.profile:"],
  ["idleTimeoutMinutes zero", (w) => (w.spec.lifecycle.idleTimeoutMinutes = 0), "spec.lifecycle.idleTimeoutMinutes:"],
  ["deletion policy unknown", (w) => (w.spec.lifecycle.deletion = "Orphan"), "spec.lifecycle.deletion:"],
  ["persistent lifecycle on ephemeral storage", (w) => (w.spec.storage.mode = "ephemeral"), "spec.storage.mode:"],
  ["model.name oversize", (w) => (w.spec.model = { name: "m".repeat(1000) }), "spec.model.name:"],
  ["task empty", (w) => (w.spec.task = ""), "spec.task:"],
  ["task over 16,384 characters", (w) => (w.spec.task = "x".repeat(16_385)), "spec.task:"],
  ["task with a NUL", (w) => (w.spec.task = "fix the tests\u0000rm -rf /"), "spec.task:"],
  ["task with an escape sequence", (w) => (w.spec.task = "fix the tests\u001b[2J"), "spec.task:"],
  ["task not text", (w) => (w.spec.task = { prompt: "fix" }), "spec.task:"],
  ["storage above the profile's maxSize", (w) => (w.spec.storage.size = "100Gi"), "spec.storage.size:"],
  ["cpu above the profile's max", (w) => (w.spec.resources.cpu = 64), "spec.resources.cpu:"],
  ["runtime the profile does not offer", (w) => (w.spec.runtime.profile = "unreviewed-agent"), "spec.runtime.profile:"],
  ["Retain on a StorageClass that deletes volumes", (w) => (w.spec.lifecycle.deletion = "Retain"), "spec.lifecycle.deletion:"],
];

// The workspace already owns objects, and an earlier pipeline step already wants one: both
// must survive any fatal answer untouched.
const OBSERVED = { namespace: OBSERVED_NAMESPACE, volume: OBSERVED_VOLUME };
const PRIOR_DESIRED = { resources: { namespace: resource(OBSERVED_NAMESPACE) }, composite: undefined };

describe("malformed documents", () => {
  it("covers at least 30 kinds of malformed document", () => {
    expect(MALFORMED.length).toBeGreaterThanOrEqual(30);
  });

  it.each(MALFORMED)("%s: fatal result naming the field", (_, breakIt, field) => {
    const req = request(edited(PERSISTENT as Doc, breakIt), { required: ALL_REQUIRED, observed: OBSERVED });
    req.desired = structuredClone(PRIOR_DESIRED);
    const rsp = runFunction(req);
    expect(rsp.results).toHaveLength(1);
    expect(rsp.results[0]?.severity).toBe(Severity.SEVERITY_FATAL);
    expect(rsp.results[0]?.message).toMatch(/^cannot render DeveloperWorkspace "[^"]*": /);
    expect(rsp.results[0]?.message).toContain(field);
    expect(rsp.desired).toEqual(PRIOR_DESIRED);
  });

  it("a malformed profile is fatal for its workspaces and names the profile's field", () => {
    const profile = edited(PROFILE, (p) => ((p.spec as { destinations: { cidrs?: string[] }[] }).destinations[0]!.cidrs = ["0.0.0.0/33"]));
    const rsp = runFunction(request(PERSISTENT, { required: { ...ALL_REQUIRED, profile: [profile] }, observed: OBSERVED }));
    expect(rsp.results.map((r) => [r.severity, r.message])).toEqual([
      [
        Severity.SEVERITY_FATAL,
        'cannot render DeveloperWorkspace "alice-payments-xr": WorkspaceProfile "standard" is invalid: spec.destinations[0].cidrs[0]: must be a CIDR block such as 10.0.0.0/24',
      ],
    ]);
  });

  it("documents that are not objects at all never crash the function", () => {
    for (const composite of [null, "text", 42, [], { kind: "DeveloperWorkspace" }, { apiVersion: "workspaces.berth.dev/v1alpha1", kind: "DeveloperWorkspace", metadata: "x" }]) {
      const rsp = runFunction(request(composite as unknown as KubeObject));
      expect(rsp.results.at(-1)?.severity).toBe(Severity.SEVERITY_FATAL);
    }
  });
});
