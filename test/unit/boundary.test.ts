// Issue 44: the ways around the boundary that a class user, or a runtime granted `edit`, had on
// 539ceab, each as a plain call. The admission side of the same findings is proven on a real API
// server (test/conformance/boundary.test.ts) and the runtime's side on a real node
// (test/live/live.test.ts, "kubernetes access edit"). Each refusal is paired with a control that
// differs only in what the rule is about, so no rule passes by refusing everything.
import type { RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import { asObserved, fatalMessages } from "../../functions/berth/tooling/local-render.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { RUNTIME_LEASE } from "../../functions/berth/render/runtime-lease.js";
import { RUNTIME_VARIABLES } from "../../functions/contracts/runtime-env.js";
import { RUNTIME_CLASS_LABEL } from "../../functions/berth/render/labels.js";
import {
  ALL_REQUIRED,
  asComposedBy,
  CHECKPOINT,
  CLASS_SANDBOX,
  EPHEMERAL,
  EW_SANDBOX,
  EXAMPLE_WORKSPACES,
  edited,
  existingBoundary,
  existingNamespace,
  PERSISTENT,
  PROFILE,
  REVIEW,
  request,
  SANDBOX_REQUIRED,
  SERVICES,
} from "../fixtures.js";
import { ofKind, renderObjects } from "../rendered.js";

const statusOf = (rsp: RunFunctionResponse) => rsp.desired?.composite?.resource as { status?: { phase?: string; reason?: string; message?: string } } | undefined;
const desiredOf = (rsp: RunFunctionResponse) => asObserved(rsp);

/** EW_SANDBOX under another name, asking for the MCP server the class permits. */
const executionWorkspace = (name: string): KubeObject =>
  edited(EW_SANDBOX, (w: any) => {
    w.metadata.name = name;
    w.spec.sessionRef.name = name;
    w.spec.requests.capabilities.mcp = [{ name: "docs", destination: "docs-mcp" }];
  });

/** What the operators' DeveloperWorkspace alice-payments-xr has in ws-alice-payments, as the API server holds it. */
const alicesNamespace = () => existingNamespace(PERSISTENT);
const alicesBoundary = () => Object.fromEntries(Object.entries(existingBoundary(PERSISTENT, ALL_REQUIRED)).map(([name, o]) => [`boundary-${name}`, [asComposedBy(o, PERSISTENT)]]));

describe("finding 1: a workspace renders only into the Namespace it created", () => {
  const squatter = executionWorkspace("alice-payments");

  it("an ExecutionWorkspace named alice-payments renders nothing into the DeveloperWorkspace alice-payments-xr's Namespace, and says whose it is", () => {
    const rsp = runFunction(request(squatter, { required: { ...SANDBOX_REQUIRED, ...alicesBoundary(), "workspace-namespace": [alicesNamespace()] }, observed: {} }));
    expect(desiredOf(rsp)).toEqual({});
    expect(statusOf(rsp)?.status).toMatchObject({
      phase: "Failed",
      reason: "NamespaceTaken",
      message: 'Namespace "ws-alice-payments" belongs to DeveloperWorkspace "alice-payments-xr": a workspace renders only into the Namespace it creates; choose another name',
    });
  });

  it("control: the same document under a free name renders its Namespace, then its boundary into it", () => {
    const own = executionWorkspace("alice-payments-2");
    expect(Object.keys(desiredOf(runFunction(request(own, { required: SANDBOX_REQUIRED }))))).toEqual(["namespace"]);
    const boundary = desiredOf(runFunction(request(own, { required: { ...SANDBOX_REQUIRED, "workspace-namespace": [existingNamespace(own)] } })));
    expect(Object.keys(boundary).length).toBeGreaterThan(8);
    for (const o of Object.values(boundary)) if (o.kind !== "Namespace") expect(o.metadata?.namespace).toBe("ws-alice-payments-2");
  });

  it("what it made there before Berth refused the clash is removed; nothing of the other workspace is in its desired state", () => {
    const made = Object.fromEntries(Object.entries(existingBoundary(squatter, SANDBOX_REQUIRED)).filter(([name]) => name !== "namespace"));
    const rsp = runFunction(request(squatter, { required: { ...SANDBOX_REQUIRED, "workspace-namespace": [alicesNamespace()] }, observed: made }));
    expect(fatalMessages(rsp)).toEqual([]);
    expect(desiredOf(rsp)).toEqual({});
    expect(rsp.results.map((r) => r.message)).toContain(
      `ExecutionWorkspace "alice-payments": Namespace "ws-alice-payments" belongs to DeveloperWorkspace "alice-payments-xr": a workspace renders only into the Namespace it creates; choose another name; removing the ${Object.keys(made).length} objects it made there`,
    );
  });

  it("a Namespace no workspace controls is not adopted", () => {
    const plain: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "ws-adm-plain" }, status: { phase: "Active" } };
    const rsp = runFunction(request(executionWorkspace("adm-plain"), { required: { ...SANDBOX_REQUIRED, "workspace-namespace": [plain] } }));
    expect(desiredOf(rsp)).toEqual({});
    expect(statusOf(rsp)?.status?.message).toBe(
      'Namespace "ws-adm-plain" already exists and no workspace controls it: Berth renders a workspace only into the Namespace it creates, and never adopts one; delete it or choose another name',
    );
  });

  it("a DeveloperWorkspace refuses a Namespace an ExecutionWorkspace took first", () => {
    const taken = asComposedBy(edited(alicesNamespace(), (n: any) => delete n.metadata.ownerReferences), squatter);
    const rsp = runFunction(request(PERSISTENT, { required: { ...ALL_REQUIRED, "workspace-namespace": [taken] } }));
    expect(desiredOf(rsp)).toEqual({});
    expect(statusOf(rsp)?.status).toMatchObject({ phase: "Failed", reason: "NamespaceTaken", message: 'Namespace "ws-alice-payments" belongs to ExecutionWorkspace "alice-payments": a workspace renders only into the Namespace it creates; choose another name' });
  });

  it("the uid decides: a document deleted and re-created under the same name does not inherit the old one's Namespace until it is gone", () => {
    const reborn = edited(PERSISTENT, (w: any) => (w.metadata.uid = "uid-new"));
    const old = asComposedBy(alicesNamespace(), edited(PERSISTENT, (w: any) => (w.metadata.uid = "uid-old")));
    const deleting = edited(old, (n: any) => (n.metadata.deletionTimestamp = "2026-12-07T10:00:00Z"));
    const rsp = runFunction(request(reborn, { required: { ...ALL_REQUIRED, "workspace-namespace": [deleting] } }));
    expect(desiredOf(rsp)).toEqual({});
    expect(statusOf(rsp)?.status?.message).toBe(
      'Namespace "ws-alice-payments" belongs to DeveloperWorkspace "alice-payments-xr" (it is being deleted; this workspace is rendered once it is gone): a workspace renders only into the Namespace it creates; choose another name',
    );
    const mine = asComposedBy(alicesNamespace(), reborn);
    expect(Object.keys(desiredOf(runFunction(request(reborn, { required: { ...ALL_REQUIRED, "workspace-namespace": [mine] } })))).length).toBeGreaterThan(8);
  });

  it("a boundary object fetched by name counts only when this workspace controls it: the workload waits", () => {
    const namespace = existingNamespace(EPHEMERAL);
    const othersBoundary = Object.fromEntries(Object.entries(existingBoundary(EPHEMERAL, ALL_REQUIRED)).filter(([n]) => n !== "namespace").map(([name, o]) => [`boundary-${name}`, [asComposedBy(o, squatter)]]));
    const held = desiredOf(runFunction(request(EPHEMERAL, { required: { ...ALL_REQUIRED, ...othersBoundary }, observed: { namespace } })));
    expect(ofKind(held, "Job")).toEqual([]);
    const ownBoundary = Object.fromEntries(Object.entries(othersBoundary).map(([k, [o]]) => [k, [asComposedBy(o!, EPHEMERAL)]]));
    expect(ofKind(desiredOf(runFunction(request(EPHEMERAL, { required: { ...ALL_REQUIRED, ...ownBoundary }, observed: { namespace } }))), "Job")).toHaveLength(1);
  });

  describe("a checkpoint snapshots only a workspace's own files, for the workspace's own creator", () => {
    const CREATED_BY = "workspaces.berth.dev/created-by";
    const workspace = (createdBy?: string) => edited(EW_SANDBOX, (w: any) => (w.metadata = { ...w.metadata, uid: "uid-session-42", ...(createdBy ? { annotations: { [CREATED_BY]: createdBy } } : {}) }));
    const checkpoint = (createdBy?: string) => edited(CHECKPOINT, (c: any) => createdBy && (c.metadata.annotations = { [CREATED_BY]: createdBy }));
    const render = (cp: KubeObject, ew: KubeObject, namespace: KubeObject) => runFunction(request(cp, { required: { workspace: [ew], class: [CLASS_SANDBOX], "workspace-namespace": [namespace] } }));

    it("taken by the workspace's creator, of the Namespace the workspace controls: the snapshot is rendered", () => {
      const ew = workspace("carl");
      expect(Object.keys(desiredOf(render(checkpoint("carl"), ew, existingNamespace(ew))))).toEqual(["snapshot"]);
    });
    it("taken by another user, though they may use the class: refused, no snapshot", () => {
      const ew = workspace("carl");
      const rsp = render(checkpoint("rita"), ew, existingNamespace(ew));
      expect(desiredOf(rsp)).toEqual({});
      expect(statusOf(rsp)?.status).toMatchObject({
        phase: "Failed",
        reason: "NotTheWorkspacesCreator",
        message: 'WorkspaceCheckpoint "work-session-42-before-refactor" was created by rita and ExecutionWorkspace "work-session-42" by carl: only a workspace\'s creator checkpoints its files',
      });
    });
    it("of a workspace whose name is another's Namespace (a DeveloperWorkspace's): refused, no snapshot of that volume", () => {
      const ew = workspace("carl");
      const rsp = render(checkpoint("carl"), ew, asComposedBy(existingNamespace(ew), PERSISTENT));
      expect(desiredOf(rsp)).toEqual({});
      expect(statusOf(rsp)?.status?.reason).toBe("NamespaceTaken");
    });
  });
});

describe("finding 3: one destination is reached either through the MCP gate or directly, never both", () => {
  const gated = { name: "docs", destination: "docs-mcp", tools: ["search"] };
  const variants: [string, (c: any) => void, string][] = [
    ["a second, ungated MCP capability", (c) => c.mcp.push({ name: "raw", destination: "docs-mcp" }), "spec.capabilities.mcp[1]"],
    ["a registry", (c) => c.registries.push({ destination: "docs-mcp" }), "spec.capabilities.registries[1]"],
    ["inference", (c) => (c.inference = { destination: "docs-mcp" }), "spec.capabilities.inference"],
    ["git", (c) => (c.git = { destination: "docs-mcp" }), "spec.capabilities.git"],
  ];
  it.each(variants)("%s naming the gated destination is refused, naming the field, and opens nothing", (_, add, field) => {
    const workspace = edited(PERSISTENT, (w: any) => {
      w.spec.capabilities.mcp = [gated];
      add(w.spec.capabilities);
      if (field === "spec.capabilities.git") w.spec.credentials = w.spec.credentials.filter((k: { purpose: string }) => k.purpose !== "git");
    });
    const rsp = runFunction(request(workspace, { required: ALL_REQUIRED, observed: { namespace: existingNamespace(workspace) } }));
    expect(fatalMessages(rsp)).toEqual([
      `cannot render DeveloperWorkspace "alice-payments-xr": ${field}.destination: "docs-mcp" is reached only through the MCP gate (spec.capabilities.mcp[0] declares its tools), so nothing reaches it directly; declare the tools here too, or remove one of them`,
    ]);
  });
  it("control: two gated capabilities to the same server, each with its tools, are rendered through the one gate", () => {
    const workspace = edited(PERSISTENT, (w: any) => (w.spec.capabilities.mcp = [gated, { name: "docs-admin", destination: "docs-mcp", tools: ["read"] }]));
    const objects = renderObjects(workspace);
    expect(Object.keys(objects).filter((n) => n.startsWith("network-policy-egress-mcp")).sort()).toEqual(["network-policy-egress-mcp-docs", "network-policy-egress-mcp-docs-admin"]);
    for (const n of ["network-policy-egress-mcp-docs", "network-policy-egress-mcp-docs-admin"]) expect((objects[n]!.spec as any).podSelector.matchLabels["workspaces.berth.dev/component"]).toBe("mcp-gate");
  });
  it("a reviewed Service without ports is refused: an egress rule without ports allows every port", () => {
    const headless = edited(SERVICES[0]!, (s: any) => delete s.spec.ports);
    const rsp = runFunction(request(EPHEMERAL, { required: { ...ALL_REQUIRED, "service-ai-gateway-gateway": [headless] }, observed: { namespace: existingNamespace(EPHEMERAL) } }));
    expect(fatalMessages(rsp)).toEqual([
      'cannot render DeveloperWorkspace "agent-fix-1234-xr": reviewed destination "model-gateway" of WorkspaceProfile "standard": Service "ai-gateway/gateway" has no ports, and an egress rule without ports allows every port; give the Service its ports, or review the destination as cidrs and ports',
    ]);
  });
});

describe("finding 7: smaller holes", () => {
  it("a credential named servers, whose variable would be BERTH_MCP_SERVERS (the runtime's list of MCP servers), is refused, naming the field", () => {
    const workspace = edited(PERSISTENT, (w: any) => w.spec.credentials.push({ name: "servers", purpose: "mcp", secretRef: { name: "x", key: "token" } }));
    expect(fatalMessages(runFunction(request(workspace, { required: ALL_REQUIRED })))).toEqual([
      'cannot render DeveloperWorkspace "alice-payments-xr": invalid document: spec.credentials[4].name: "servers" would set BERTH_MCP_SERVERS in the runtime, a variable Berth sets itself; choose another name',
    ]);
  });
  it.each(RUNTIME_VARIABLES.filter((v) => /^BERTH_(INFERENCE|MCP|REGISTRY)_/.test(v)))("every variable Berth sets that a credential could spell is refused the same way: %s", (variable) => {
    const [, purpose, rest] = /^BERTH_(INFERENCE|MCP|REGISTRY)_(.+)$/.exec(variable)!;
    const name = rest!.toLowerCase().replace(/_/g, "-");
    const workspace = edited(PERSISTENT, (w: any) => w.spec.credentials.push({ name, purpose: purpose!.toLowerCase(), secretRef: { name: "x", key: "token" } }));
    expect(fatalMessages(runFunction(request(workspace, { required: ALL_REQUIRED })))[0]).toContain(`spec.credentials[4].name: "${name}" would set ${variable} in the runtime`);
  });
  it("control: a credential under any other name reaches the runtime as its own variable", () => {
    const workspace = edited(PERSISTENT, (w: any) => w.spec.credentials.push({ name: "search-key", purpose: "inference", secretRef: { name: "x", key: "token" } }));
    const job = ofKind(renderObjects(workspace), "Job")[0]!;
    const runtime = (job.spec as any).template.spec.containers[0];
    expect(runtime.env.map((e: { name: string }) => e.name)).toContain("BERTH_INFERENCE_SEARCH_KEY");
    const names = runtime.env.map((e: { name: string }) => e.name);
    expect(new Set(names).size, "no variable is set twice").toBe(names.length);
  });

  it.each([["persistent", PERSISTENT], ["sandbox with a gated MCP server", edited(EW_SANDBOX, (w: any) => (w.spec.requests.capabilities.mcp = [{ name: "docs", destination: "docs-mcp", tools: ["search"] }]))]] as const)(
    "%s: the MCP gate's Deployment, whose pod holds the MCP credential, waits for the boundary like the runtime",
    (_, workspace) => {
      const required = workspace.kind === "DeveloperWorkspace" ? ALL_REQUIRED : SANDBOX_REQUIRED;
      const first = desiredOf(runFunction(request(workspace, { required, observed: { namespace: existingNamespace(workspace) } })));
      expect(first["mcp-gate-policy"], "the gate's policy is boundary").toBeDefined();
      expect(first["mcp-gate"], "the gate's Deployment is not created with the boundary").toBeUndefined();
      expect(renderObjects(workspace, required)["mcp-gate"]?.kind, "it follows once the boundary exists").toBe("Deployment");
    },
  );

  describe("the checkout presents the git credential only to a host the profile reviewed for the git destination", () => {
    it("a repository on another host is refused, naming the field", () => {
      const workspace = edited(PERSISTENT, (w: any) => (w.spec.source.repository = "https://gateway.ai-gateway.svc/example/payments.git"));
      expect(fatalMessages(runFunction(request(workspace, { required: ALL_REQUIRED })))).toEqual([
        'cannot render DeveloperWorkspace "alice-payments-xr": spec.source.repository: host "gateway.ai-gateway.svc" is not a host WorkspaceProfile "standard" reviews for destination "github" (github.com), and the checkout would present the git credential to it',
      ]);
    });
    it("control: the reviewed host, and any host without a git credential", () => {
      expect(fatalMessages(runFunction(request(PERSISTENT, { required: ALL_REQUIRED })))).toEqual([]);
      const anonymous = edited(PERSISTENT, (w: any) => {
        w.spec.source.repository = "https://gateway.ai-gateway.svc/example/payments.git";
        w.spec.credentials = w.spec.credentials.filter((k: { purpose: string }) => k.purpose !== "git");
      });
      expect(fatalMessages(runFunction(request(anonymous, { required: ALL_REQUIRED })))).toEqual([]);
    });
    it("a git destination whose profile lists no hosts cannot take a git credential", () => {
      const profile = edited(PROFILE, (p: any) => delete p.spec.destinations.find((d: { name: string }) => d.name === "github").hosts);
      expect(fatalMessages(runFunction(request(PERSISTENT, { required: { ...ALL_REQUIRED, profile: [profile] } })))).toEqual([
        'cannot render DeveloperWorkspace "alice-payments-xr": spec.source.repository: WorkspaceProfile "standard" lists no hosts for destination "github", so the git credential cannot be bound to one (spec.destinations[].hosts)',
      ]);
    });
  });
});

describe("finding 7, DNS: cluster DNS forwards any name upstream (out of scope by default); a profile can point workspaces at a resolver that does not", () => {
  const withResolver = edited(PROFILE, (p: any) => (p.spec.dns = { namespace: "kube-system", podSelector: { "k8s-app": "workspace-dns" }, nameservers: ["10.96.0.53"] }));
  const podSpecs = (objects: Record<string, KubeObject>) =>
    Object.values(objects).flatMap((o: any) => (o.kind === "Job" || o.kind === "Deployment" ? [o.spec.template.spec] : o.kind === "Sandbox" ? [o.spec.podTemplate.spec] : []));

  it("with nameservers, every pod Berth renders asks that resolver alone, with the search path ClusterFirst gives, and DNS egress reaches its pods only", () => {
    const objects = renderObjects(PERSISTENT, { ...ALL_REQUIRED, profile: [withResolver] });
    const specs = podSpecs(objects);
    expect(specs.length, "the Job and the MCP gate").toBe(2);
    for (const spec of specs) {
      expect(spec.dnsPolicy).toBe("None");
      expect(spec.dnsConfig).toEqual({ nameservers: ["10.96.0.53"], searches: ["ws-alice-payments.svc.cluster.local", "svc.cluster.local", "cluster.local"], options: [{ name: "ndots", value: "5" }] });
    }
    expect((objects["network-policy-dns"]!.spec as any).egress[0].to).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "workspace-dns" } } }]);
  });
  it("control: without, pods use the cluster's DNS as Kubernetes gives it", () => {
    for (const spec of podSpecs(renderObjects(PERSISTENT))) expect([spec.dnsPolicy, spec.dnsConfig]).toEqual([undefined, undefined]);
  });
});

describe("finding 2: what a runtime granted edit makes lives no longer than its run", () => {
  const withEdit = (w: KubeObject) =>
    edited(w, (x: any) => {
      if (x.kind === "DeveloperWorkspace") x.spec.capabilities.kubernetes = { access: "edit", destination: "kube-api" };
      else x.spec.requests.capabilities.kubernetes = { access: "edit", destination: "kube-api" };
    });
  const editClass = edited(CLASS_SANDBOX, (c: any) => {
    c.spec.permits.kubernetesAccess = "edit";
    c.spec.permits.destinations.push("kube-api");
  });
  const sandboxRequired = { ...SANDBOX_REQUIRED, class: [editClass] };

  it("a DeveloperWorkspace with edit gets the runtime lease, and its runtime is told its name; without edit there is none", () => {
    const objects = renderObjects(withEdit(REVIEW));
    expect(objects[RUNTIME_LEASE.resource]).toMatchObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: RUNTIME_LEASE.name, namespace: "ws-review-pr-987" } });
    const runtime = (ofKind(objects, "Job")[0]!.spec as any).template.spec.containers[0];
    expect(runtime.env).toContainEqual({ name: "BERTH_RUNTIME_LEASE", value: RUNTIME_LEASE.name });
    for (const w of Object.values(EXAMPLE_WORKSPACES)) expect(renderObjects(w)[RUNTIME_LEASE.resource]).toBeUndefined();
  });

  it("once the run has ended, the lease is no longer rendered (Crossplane deletes it, and the garbage collector everything it owns)", () => {
    const workspace = withEdit(REVIEW);
    const objects = renderObjects(workspace);
    expect(objects[RUNTIME_LEASE.resource], "the lease while the run goes on").toBeDefined();
    const finished = { ...objects, workload: { ...objects.workload!, status: { succeeded: 1, completionTime: "2026-12-07T10:00:00Z", conditions: [{ type: "Complete", status: "True" }] } } };
    const after = desiredOf(runFunction(request(workspace, { required: ALL_REQUIRED, observed: finished })));
    expect(after.workload, "the Job is kept").toBeDefined();
    expect(after[RUNTIME_LEASE.resource]).toBeUndefined();
  });

  it("an ExecutionWorkspace with edit has the lease while it runs, and not while it is Suspended", () => {
    const running = withEdit(EW_SANDBOX);
    expect(renderObjects(running, sandboxRequired)[RUNTIME_LEASE.resource]?.kind).toBe("ConfigMap");
    const suspended = edited(running, (w: any) => (w.spec.desiredState = "Suspended"));
    const observed = renderObjects(running, sandboxRequired);
    expect(desiredOf(runFunction(request(suspended, { required: sandboxRequired, observed })))[RUNTIME_LEASE.resource]).toBeUndefined();
  });

  it("the Namespace names the runtime class of the workspace's runtime, which admission requires of every pod the runtime makes; none when the runtime has none", () => {
    const sandbox = renderObjects(EW_SANDBOX, SANDBOX_REQUIRED).namespace!;
    expect((sandbox.metadata as any).labels[RUNTIME_CLASS_LABEL]).toBe("gvisor");
    expect((renderObjects(PERSISTENT).namespace!.metadata as any).labels[RUNTIME_CLASS_LABEL]).toBeUndefined();
  });

  it.each(Object.entries(EXAMPLE_WORKSPACES))("%s: the LimitRange refuses a container that asks for no CPU or memory (the quota would count it as nothing)", (_, workspace) => {
    const [limitRange] = ofKind(renderObjects(workspace), "LimitRange");
    const container = (limitRange!.spec as any).limits.find((l: { type: string }) => l.type === "Container");
    expect(container.min).toEqual({ cpu: "1m", memory: "1Mi" });
  });
});
