// One describe per rule of BRIEF.md that the function enforces, checked over every example
// workspace. Each assertion reads the rendered objects, so a renderer that breaks the rule
// fails here whatever the golden files say.
import { describe, expect, it } from "vitest";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { KubeObject } from "../../functions/berth/model.js";
import type { RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { runFunction } from "../../functions/berth/function.js";
import { asObserved } from "../../functions/berth/tooling/local-render.js";
import { ALL_REQUIRED, boundaryAsRequired, EW_SANDBOX, EW_SUBSTRATE, EXAMPLE_WORKSPACES, edited, existingNamespace, PROFILE, request, SANDBOX_REQUIRED, SUBSTRATE_REQUIRED } from "../fixtures.js";
import { allContainers, ofKind, podSpec, renderObjects, renderReconciles, selects } from "../rendered.js";
import { quantityValue } from "../../functions/berth/schema/quantity.js";

const examples = Object.entries(EXAMPLE_WORKSPACES);

type Spec = { capabilities: Record<string, unknown>; credentials: { name: string; purpose: string; secretRef: { name: string } }[] };
const specOf = (w: KubeObject) => w.spec as Spec;

describe("rule 5: no ambient authority", () => {
  it.each(examples)("%s: the ServiceAccount and the pod mount no token", (_, workspace) => {
    const objects = renderObjects(workspace);
    const [sa] = ofKind(objects, "ServiceAccount");
    expect(sa?.automountServiceAccountToken).toBe(false);
    expect(podSpec(objects).automountServiceAccountToken).toBe(false);
  });

  it.each(examples)("%s: RBAC and a projected token exist only with a declared kubernetes capability", (_, workspace) => {
    const objects = renderObjects(workspace);
    const access = (specOf(workspace).capabilities.kubernetes as { access?: string } | undefined)?.access ?? "none";
    const roles = [...ofKind(objects, "Role"), ...ofKind(objects, "RoleBinding"), ...ofKind(objects, "ClusterRole"), ...ofKind(objects, "ClusterRoleBinding")];
    const tokenVolumes = (podSpec(objects).volumes ?? []).filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
    if (access === "none") {
      expect(roles).toEqual([]);
      expect(tokenVolumes).toEqual([]);
    } else {
      expect(roles.map((r) => r.kind).sort()).toEqual(["Role", "RoleBinding"]);
      expect(tokenVolumes).toHaveLength(1);
      const mounting = allContainers(podSpec(objects)).filter((c) => c.volumeMounts?.some((m) => m.name === tokenVolumes[0]!.name));
      expect(mounting.map((c) => c.name)).toEqual(["runtime"]);
    }
  });

  it("no access level lets a workload touch Secrets, the network boundary, quotas or RBAC", () => {
    for (const access of ["read", "edit"]) {
      const workspace = edited(EXAMPLE_WORKSPACES.review, (w) => (specOf(w).capabilities.kubernetes = { access, destination: "kube-api" }));
      const [role] = ofKind(renderObjects(workspace), "Role");
      const rules = (role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule.apiGroups).not.toContain("*");
        expect(rule.apiGroups).not.toContain("rbac.authorization.k8s.io");
        expect(rule.apiGroups).not.toContain("networking.k8s.io");
        for (const forbidden of ["*", "secrets", "networkpolicies", "resourcequotas", "limitranges", "serviceaccounts", "serviceaccounts/token", "pods/exec", "namespaces"]) {
          expect(rule.resources).not.toContain(forbidden);
        }
        if (access === "read") expect(rule.verbs).toEqual(["get", "list", "watch"]);
      }
    }
  });

  it.each(examples)("%s: the Namespace enforces Pod Security restricted and every container is hardened", (_, workspace) => {
    const objects = renderObjects(workspace);
    const [ns] = ofKind(objects, "Namespace");
    const labels = (ns?.metadata?.labels ?? {}) as Record<string, string>;
    expect(labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const pod = podSpec(objects);
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
    for (const c of allContainers(pod)) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ["ALL"] },
      });
      expect(c.securityContext?.capabilities?.add).toBeUndefined();
    }
    expect(pod.hostNetwork ?? false).toBe(false);
    expect(pod.hostPID ?? false).toBe(false);
  });

  it.each(examples)("%s: default deny in both directions, and no policy allows ingress but the MCP gate's (from the workspace's own pods) and the evidence collector's (from the export's pods)", (_, workspace) => {
    const policies = ofKind(renderObjects(workspace), "NetworkPolicy");
    const deny = policies.find((p) => p.metadata?.name === "default-deny");
    expect(deny?.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    for (const p of policies) {
      const ingress = (p.spec as { ingress?: unknown }).ingress;
      const labels = p.metadata?.labels as Record<string, string>;
      if (p.metadata?.name === "mcp-gate-ingress") {
        expect(p.spec).toEqual({
          podSelector: { matchLabels: { ...labels, "workspaces.berth.dev/component": "mcp-gate" } },
          policyTypes: ["Ingress"],
          ingress: [{ from: [{ podSelector: {} }], ports: [{ port: 8080, protocol: "TCP" }] }],
        });
      } else if (p.metadata?.name === "evidence-collect-ingress") {
        expect(p.spec).toEqual({
          podSelector: { matchLabels: { "batch.kubernetes.io/job-name": "workspace" } },
          policyTypes: ["Ingress"],
          ingress: [{ from: [{ podSelector: { matchLabels: { ...labels, "workspaces.berth.dev/component": "evidence-export" } } }], ports: [{ port: 9090, protocol: "TCP" }] }],
        });
      } else {
        expect(ingress, p.metadata?.name).toBeUndefined();
      }
    }
  });

  it.each(examples)("%s: egress reaches DNS and the reviewed destinations of declared capabilities, nothing else", (_, workspace) => {
    const policies = ofKind(renderObjects(workspace), "NetworkPolicy");
    const profileSpec = PROFILE.spec as { destinations: { name: string; cidrs?: string[] }[] };
    const caps = specOf(workspace).capabilities as {
      git?: { destination: string };
      inference?: { destination: string };
      mcp?: { destination: string }[];
      registries?: { destination: string }[];
      kubernetes?: { access: string; destination?: string };
    };
    const declared = new Set([
      caps.git?.destination,
      caps.inference?.destination,
      ...(caps.mcp ?? []).map((m) => m.destination),
      ...(caps.registries ?? []).map((r) => r.destination),
      caps.kubernetes?.access !== "none" ? caps.kubernetes?.destination : undefined,
    ].filter((d): d is string => d !== undefined));
    const opened = policies.filter((p) => p.metadata?.name?.startsWith("egress-"));
    expect(opened.map((p) => (p.metadata?.annotations as Record<string, string>)["workspaces.berth.dev/destination"]).sort()).toEqual([...declared].sort());
    const allowedCidrs = new Set(profileSpec.destinations.filter((d) => declared.has(d.name)).flatMap((d) => d.cidrs ?? []));
    for (const p of opened) {
      const peers = (p.spec as { egress: { to: { ipBlock?: { cidr: string; except?: string[] } }[] }[] }).egress.flatMap((e) => e.to);
      expect(peers.length).toBeGreaterThan(0);
      for (const peer of peers) if (peer.ipBlock) expect(allowedCidrs.has(peer.ipBlock.cidr)).toBe(true);
    }
    const dns = policies.find((p) => p.metadata?.name === "allow-dns");
    expect((dns?.spec as { egress: { ports: { port: number }[] }[] }).egress[0]?.ports.map((p) => p.port)).toEqual([53, 53]);
    const gated = (caps.mcp ?? []).some((m) => (m as { tools?: string[] }).tools !== undefined);
    // Evidence goes to the profile's registry from the export's pods alone, which reach nothing declared.
    const exporting = (workspace.spec as { lifecycle?: { evidence?: { exportBeforeCleanup?: boolean } } }).lifecycle?.evidence?.exportBeforeCleanup === true;
    const exportPods = { matchLabels: { ...(policies[0]!.metadata?.labels as Record<string, string>), "workspaces.berth.dev/component": "evidence-export" } };
    const evidence = policies.find((p) => p.metadata?.name === "evidence-export");
    if (exporting) {
      expect((evidence?.metadata?.annotations as Record<string, string>)["workspaces.berth.dev/destination"]).toBe((PROFILE.spec as { evidence: { destination: string } }).evidence.destination);
      expect((evidence?.spec as { podSelector: unknown }).podSelector).toEqual(exportPods);
      expect(declared.has((PROFILE.spec as { evidence: { destination: string } }).evidence.destination)).toBe(false);
      for (const p of opened.filter((o) => (o.spec as { podSelector: { matchLabels?: unknown } }).podSelector.matchLabels === undefined)) {
        expect((p.spec as { podSelector: unknown }).podSelector, p.metadata?.name).toEqual({ matchExpressions: [{ key: "workspaces.berth.dev/component", operator: "NotIn", values: ["evidence-export"] }] });
      }
    } else {
      expect(evidence).toBeUndefined();
    }
    expect(policies).toHaveLength(2 + declared.size + (gated ? 2 : 0) + (exporting ? 3 : 0));
  });

  /** Everything the workspace refers to, found. */
  const requiredFor = (workspace: KubeObject) =>
    workspace.kind === "ExecutionWorkspace" ? (workspace === EW_SUBSTRATE ? SUBSTRATE_REQUIRED : SANDBOX_REQUIRED) : ALL_REQUIRED;
  // The MCP gate (a Deployment) runs code too: its pod holds the MCP credential.
  const runsCode = (o: KubeObject) => ["Job", "Deployment", "Sandbox", "WorkerPool", "ActorTemplate"].includes(o.kind);

  it.each([...examples, ["sandbox", EW_SANDBOX] as const, ["substrate", EW_SUBSTRATE] as const])(
    "%s: what runs code is created only after every object that bounds it exists",
    (_, workspace) => {
      const required = requiredFor(workspace);
      let created = false;
      for (const { observed, desired } of renderReconciles(workspace, required)) {
        for (const [name, o] of Object.entries(desired)) {
          if (!runsCode(o) || observed[name] !== undefined) continue;
          const boundary = Object.entries(desired).filter(([, b]) => !runsCode(b) && b.metadata?.namespace !== undefined);
          expect(boundary.filter(([n]) => observed[n] === undefined).map(([n]) => n), `${name} created before`).toEqual([]);
          expect(boundary.map(([, b]) => b.kind)).toEqual(expect.arrayContaining(["ServiceAccount", "ResourceQuota", "NetworkPolicy"]));
          created = true;
        }
      }
      expect(created, "the workload is created at all").toBe(true);
    },
  );

  it.each([...examples, ["sandbox", EW_SANDBOX] as const, ["substrate", EW_SUBSTRATE] as const])(
    "%s: a boundary Crossplane fetched counts as existing, every object of it, and is asked for only while the workload waits",
    (_, workspace) => {
      const required = requiredFor(workspace);
      const boundaryAsked = (rsp: RunFunctionResponse) => Object.keys(rsp.requirements?.resources ?? {}).filter((k) => k.startsWith("boundary-")).sort();
      const namespace = existingNamespace(workspace);
      const found = boundaryAsRequired(workspace, required);
      const render = (extra: Record<string, KubeObject[]>, observed: Record<string, KubeObject>) => runFunction(request(workspace, { required: { ...required, ...extra }, observed }));

      expect(boundaryAsked(render({}, {})), "before the Namespace exists").toEqual([]);
      expect(boundaryAsked(render({}, { namespace })), "once it exists").toEqual(Object.keys(found).sort());
      expect(Object.keys(found).length).toBeGreaterThanOrEqual(6);
      expect(Object.values(asObserved(render(found, { namespace }))).filter(runsCode), "all found").not.toEqual([]);
      for (const key of Object.keys(found)) {
        const name = key.slice("boundary-".length);
        const held = asObserved(render(boundaryAsRequired(workspace, required, [name]), { namespace }));
        expect(Object.values(held).filter(runsCode), `${name} missing`).toEqual([]);
      }
      expect(boundaryAsked(render({}, renderObjects(workspace, required))), "once the workload exists").toEqual([]);
    },
  );
});

describe("credentials reach only the container that needs them", () => {
  it.each(examples)("%s: the Git credential is only in the checkout init container", (_, workspace) => {
    const pod = podSpec(renderObjects(workspace));
    const git = (specOf(workspace).credentials ?? []).filter((c) => c.purpose === "git").map((c) => c.secretRef.name);
    const secretsOf = (name: string) =>
      allContainers(pod)
        .filter((c) => c.name === name)
        .flatMap((c) => [...(c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.name), ...(c.envFrom ?? []).map((e) => e.secretRef?.name)]);
    for (const secret of git) {
      expect(secretsOf("checkout")).toContain(secret);
      expect(secretsOf("runtime")).not.toContain(secret);
    }
    // And no volume carries a Secret into any container.
    expect((pod.volumes ?? []).filter((v) => v.secret)).toEqual([]);
  });

  it("no rendered object contains a secret value", () => {
    for (const workspace of Object.values(EXAMPLE_WORKSPACES)) {
      expect(ofKind(renderObjects(workspace), "Secret")).toEqual([]);
    }
  });
});

describe("declared MCP tools: the gate alone reaches the server, and offers only them", () => {
  const persistent = EXAMPLE_WORKSPACES.persistent;
  const gatePods = (objects: Record<string, KubeObject>) => {
    const [gate] = ofKind(objects, "Deployment");
    return { gate, pod: (gate?.spec as { template: { metadata: { labels: Record<string, string> }; spec: IPodSpec } }).template };
  };
  const policyFile = (objects: Record<string, KubeObject>) => JSON.parse((ofKind(objects, "ConfigMap").find((c) => c.metadata?.name === "mcp-gate")?.data as Record<string, string>)["policy.json"]!);
  const messages = (rsp: RunFunctionResponse) => [...(rsp.conditions ?? []), ...(rsp.results ?? [])].map((c) => c.message ?? "").join("\n");

  it("only the gate's pods are selected by the gated server's egress; the runtime's egress is to the gate's port", () => {
    const objects = renderObjects(persistent);
    const { pod } = gatePods(objects);
    const runtimeLabels = (ofKind(objects, "Job")[0]!.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const policies = ofKind(objects, "NetworkPolicy");
    const docs = policies.find((p) => p.metadata?.name === "egress-mcp-docs")!;
    expect(selects(docs, pod.metadata.labels)).toBe(true);
    expect(selects(docs, runtimeLabels), "the runtime reaches the MCP server").toBe(false);
    // Every other policy that opens egress to anything but DNS selects no runtime pod for the MCP server's pods.
    const docsPeers = JSON.stringify((docs.spec as { egress: { to: unknown }[] }).egress[0]!.to);
    for (const p of policies) {
      if (p === docs || !selects(p, runtimeLabels)) continue;
      for (const rule of (p.spec as { egress?: { to?: unknown }[] }).egress ?? []) expect(JSON.stringify(rule.to), p.metadata?.name).not.toBe(docsPeers);
    }
    const toGate = policies.find((p) => p.metadata?.name === "mcp-gate")!;
    expect(selects(toGate, runtimeLabels)).toBe(true);
    expect(toGate.spec).toEqual({
      // Every pod but the evidence export's, which reaches its registry alone.
      podSelector: { matchExpressions: [{ key: "workspaces.berth.dev/component", operator: "NotIn", values: ["evidence-export"] }] },
      policyTypes: ["Egress"],
      egress: [{ to: [{ podSelector: { matchLabels: pod.metadata.labels } }], ports: [{ port: 8080, protocol: "TCP" }] }],
    });
  });

  it("the gate's policy is the document's tool list and the reviewed destination's endpoint; a new list rolls the gate", () => {
    const objects = renderObjects(persistent);
    expect(policyFile(objects)).toEqual({ servers: [{ name: "docs", upstream: "https://docs.mcp.svc:443/mcp", tools: ["search", "read"], credentialEnv: "BERTH_MCP_DOCS" }] });
    const changed = renderObjects(edited(persistent, (w) => ((specOf(w).capabilities.mcp as { tools: string[] }[])[0]!.tools = ["search"])));
    expect(policyFile(changed).servers[0].tools).toEqual(["search"]);
    const hash = (o: Record<string, KubeObject>) => gatePods(o).pod.metadata as unknown as { annotations: Record<string, string> };
    expect(hash(changed).annotations["workspaces.berth.dev/mcp-gate-policy"]).not.toBe(hash(objects).annotations["workspaces.berth.dev/mcp-gate-policy"]);
  });

  it("the MCP credential goes to the gate, never to the runtime, which is told the gate's URL", () => {
    const objects = renderObjects(persistent);
    const gate = gatePods(objects).pod.spec.containers[0]!;
    expect(gate.env).toEqual([{ name: "BERTH_MCP_DOCS", valueFrom: { secretKeyRef: { name: "alice-docs-mcp", key: "token" } } }]);
    const secretsOf = (c: { env?: { valueFrom?: { secretKeyRef?: { name?: string } } }[] }) => (c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.name);
    for (const c of allContainers(podSpec(objects))) expect(secretsOf(c), c.name).not.toContain("alice-docs-mcp");
    const runtime = podSpec(objects).containers.find((c) => c.name === "runtime")!;
    const servers = JSON.parse(runtime.env!.find((e) => e.name === "BERTH_MCP_SERVERS")!.value!);
    expect(servers).toEqual([{ name: "docs", tools: ["search", "read"], url: "http://mcp-gate:8080/mcp/docs" }]);
  });

  it("the gate runs hardened, as the workspace's user, and is ready once available", () => {
    const { pod } = gatePods(renderObjects(persistent));
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.spec.containers[0]!.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
  });

  it("a workspace smaller than its gate still admits the gate: the LimitRange's max is the larger, the quota the sum", () => {
    const small = edited(persistent, (w) => ((w.spec as { resources: unknown }).resources = { cpu: "100m", memory: "128Mi" }));
    const objects = renderObjects(small);
    const [limits] = ofKind(objects, "LimitRange");
    expect((limits?.spec as { limits: { type: string; max: unknown }[] }).limits.find((l) => l.type === "Container")?.max).toEqual({ cpu: "100m", memory: "256Mi" });
    const hard = (ofKind(objects, "ResourceQuota")[0]?.spec as { hard: Record<string, string> }).hard;
    // The workspace, its gate, and its evidence collector and export (100m and 128Mi each).
    expect([hard["limits.cpu"], hard["limits.memory"]]).toEqual(["400m", "640Mi"]);
    const ungated = renderObjects(edited(small, (w) => delete (specOf(w).capabilities.mcp as { tools?: string[] }[])[0]!.tools));
    expect((ofKind(ungated, "LimitRange")[0]?.spec as { limits: { type: string; max: unknown }[] }).limits.find((l) => l.type === "Container")?.max).toEqual({ cpu: "100m", memory: "128Mi" });
  });

  it("an ExecutionWorkspace that declares MCP tools gets its gate too, and its runtime is told the gate's URL", () => {
    const ew = edited(EW_SANDBOX, (w) => {
      const requests = (w.spec as { requests: { capabilities?: Record<string, unknown> } }).requests;
      requests.capabilities = { ...requests.capabilities, mcp: [{ name: "docs", destination: "docs-mcp", tools: ["search"] }] };
    });
    const objects = renderObjects(ew, SANDBOX_REQUIRED);
    expect(policyFile(objects)).toEqual({ servers: [{ name: "docs", upstream: "https://docs.mcp.svc:443/mcp", tools: ["search"] }] });
    const [sandbox] = ofKind(objects, "Sandbox");
    const runtime = (sandbox?.spec as { podTemplate: { spec: IPodSpec } }).podTemplate.spec.containers.find((c) => c.name === "runtime")!;
    expect(JSON.parse(runtime.env!.find((e) => e.name === "BERTH_MCP_SERVERS")!.value!)).toEqual([{ name: "docs", tools: ["search"], url: "http://mcp-gate:8080/mcp/docs" }]);
  });

  it("tools omitted: no gate, the server reached directly, as declared", () => {
    const objects = renderObjects(edited(persistent, (w) => delete (specOf(w).capabilities.mcp as { tools?: string[] }[])[0]!.tools));
    expect(ofKind(objects, "Deployment")).toEqual([]);
    expect(ofKind(objects, "ConfigMap")).toEqual([]);
    expect(ofKind(objects, "Service")).toEqual([]);
    const docs = ofKind(objects, "NetworkPolicy").find((p) => p.metadata?.name === "egress-mcp-docs")!;
    // Every pod of the workspace but the evidence export's.
    expect((docs.spec as { podSelector: unknown }).podSelector).toEqual({ matchExpressions: [{ key: "workspaces.berth.dev/component", operator: "NotIn", values: ["evidence-export"] }] });
  });

  it("declared tools and a profile without a gate: refused, naming the field, nothing rendered", () => {
    const profile = edited(PROFILE, (p) => delete (p.spec as { mcpGate?: unknown }).mcpGate);
    const rsp = runFunction(request(persistent, { required: { ...ALL_REQUIRED, profile: [profile] } }));
    expect(rsp.desired?.resources ?? {}).toEqual({});
    expect(messages(rsp)).toContain('spec.capabilities.mcp[0].tools: WorkspaceProfile "standard" has no spec.mcpGate');
  });

  it("a gated destination given as cidrs must be one address", () => {
    const profile = edited(PROFILE, (p) => {
      const d = (p.spec as { destinations: Record<string, unknown>[] }).destinations.find((x) => x.name === "docs-mcp")!;
      delete d.service;
      d.cidrs = ["10.40.0.0/24"];
      d.ports = [{ port: 8080 }];
    });
    const rsp = runFunction(request(persistent, { required: { ...ALL_REQUIRED, profile: [profile] } }));
    expect(messages(rsp)).toContain('spec.capabilities.mcp[0].destination: reviewed destination "docs-mcp" of WorkspaceProfile "standard" must be one address');
    const single = edited(profile, (p) => ((p.spec as { destinations: Record<string, unknown>[] }).destinations.find((x) => x.name === "docs-mcp")!.cidrs = ["10.40.0.7/32"]));
    expect(policyFile(renderObjects(persistent, { ...ALL_REQUIRED, profile: [single] })).servers[0].upstream).toBe("https://10.40.0.7:8080/mcp");
  });
});

describe("rule 4: hostUsers where capacity is enforced at runtime", () => {
  it.each(examples)("%s: runtime-enforced capacity labels the Namespace and sets hostUsers: false", (_, workspace) => {
    const objects = renderObjects(workspace);
    const [ns] = ofKind(objects, "Namespace");
    expect((ns?.metadata?.labels as Record<string, string>)["workspaces.berth.dev/capacity-enforcement"]).toBe("Runtime");
    expect(podSpec(objects).hostUsers).toBe(false);
  });

  it("a profile without runtime enforcement neither labels nor sets hostUsers", () => {
    const profile = edited(PROFILE, (p) => ((p.spec as { storage: { capacityEnforcement: string } }).storage.capacityEnforcement = "None"));
    const objects = renderObjects(EXAMPLE_WORKSPACES.ephemeral, { ...ALL_REQUIRED, profile: [profile] });
    const [ns] = ofKind(objects, "Namespace");
    expect(ns?.metadata?.labels).not.toHaveProperty(["workspaces.berth.dev/capacity-enforcement"]);
    expect(podSpec(objects)).not.toHaveProperty("hostUsers");
  });
});

describe("the workspace's budget", () => {
  it.each(examples)("%s: quota equals the document's resources and storage", (_, workspace) => {
    const objects = renderObjects(workspace);
    const spec = workspace.spec as { resources: { cpu: string; memory: string }; storage: { mode: string; size: string } };
    const [quota] = ofKind(objects, "ResourceQuota");
    const hard = (quota?.spec as { hard: Record<string, string> }).hard;
    // A workspace with an MCP gate pays for it: the profile's gate resources on top, one Service.
    const gate = ofKind(objects, "Deployment").length === 1 ? { cpu: 0.1, memory: 256 * 2 ** 20, services: "1" } : { cpu: 0, memory: 0, services: "0" };
    // And for evidence, its collector and its export, which run at the same time.
    const exporting = (workspace.spec as { lifecycle?: { evidence?: { exportBeforeCleanup?: boolean } } }).lifecycle?.evidence?.exportBeforeCleanup === true;
    const evidence = exporting ? { cpu: 0.2, memory: 256 * 2 ** 20 } : { cpu: 0, memory: 0 };
    expect(quantityValue(hard["requests.cpu"]!)).toBeCloseTo(quantityValue(String(spec.resources.cpu)) + gate.cpu + evidence.cpu, 9);
    expect(quantityValue(hard["limits.memory"]!)).toBe(quantityValue(String(spec.resources.memory)) + gate.memory + evidence.memory);
    expect(hard.services).toBe(gate.services);
    expect(hard["requests.storage"]).toBe(spec.storage.mode === "persistent" ? spec.storage.size : "0");
    expect(hard["services.loadbalancers"]).toBe("0");
    const claims = ofKind(objects, "PersistentVolumeClaim");
    if (spec.storage.mode === "persistent") {
      expect(claims).toHaveLength(1);
      expect((claims[0]?.spec as { storageClassName: string }).storageClassName).toBe("xfs-quota");
    } else {
      expect(claims).toEqual([]);
      expect(podSpec(objects).volumes?.find((v) => v.name === "workspace")?.emptyDir?.sizeLimit).toBe(spec.storage.size);
    }
  });
});

describe("the task: what the agent is asked to do", () => {
  const task = "Fix the failing test in src/payments.ts.\n\tKeep the public API as it is.";
  const runtimeEnv = (workspace: KubeObject) => allContainers(podSpec(renderObjects(workspace))).map((c) => [c.name, (c.env ?? []).filter((e) => e.name === "BERTH_TASK")] as const);

  it("reaches the runtime, and only the runtime, as BERTH_TASK, lines and tabs kept", () => {
    const withTask = edited(EXAMPLE_WORKSPACES.persistent, (w) => ((w.spec as Record<string, unknown>).task = task));
    expect(runtimeEnv(withTask).filter(([, env]) => env.length > 0)).toEqual([["runtime", [{ name: "BERTH_TASK", value: task }]]]);
  });

  it("is not set when the document gives none", () => {
    expect(runtimeEnv(EXAMPLE_WORKSPACES.persistent).filter(([, env]) => env.length > 0)).toEqual([]);
  });
});

describe("inference the runtime can find: the model service's URL and API, from the reviewed destination", () => {
  const inferenceEnv = (objects: Record<string, KubeObject>) =>
    allContainers(podSpec(objects)).flatMap((c) => (c.env ?? []).filter((e) => e.name.startsWith("BERTH_INFERENCE_") && !e.valueFrom).map((e) => [c.name, e.name, e.value]));
  const withGateway = (change: (d: Record<string, unknown>) => void) =>
    edited(PROFILE, (p) => change((p.spec as { destinations: Record<string, unknown>[] }).destinations.find((x) => x.name === "model-gateway")!));

  it("a Service destination: its <name>.<namespace>.svc and first port, given to the runtime alone, with the credential's variable", () => {
    expect(inferenceEnv(renderObjects(EXAMPLE_WORKSPACES.persistent))).toEqual([
      ["runtime", "BERTH_INFERENCE_URL", "http://gateway.ai-gateway.svc:80/v1"],
      ["runtime", "BERTH_INFERENCE_API", "openai"],
      ["runtime", "BERTH_INFERENCE_CREDENTIAL", "BERTH_INFERENCE_GATEWAY_KEY"],
    ]);
  });

  it("an ExecutionWorkspace's runtime is told the same URL", () => {
    const sandbox = ofKind(renderObjects(EW_SANDBOX, SANDBOX_REQUIRED), "Sandbox")[0]!;
    const containers = (sandbox.spec as { podTemplate: { spec: IPodSpec } }).podTemplate.spec.containers;
    const env = containers.flatMap((c) => (c.env ?? []).filter((e) => e.name.startsWith("BERTH_INFERENCE_")).map((e) => [c.name, e.name, e.value]));
    expect(env).toEqual([
      ["runtime", "BERTH_INFERENCE_URL", "http://gateway.ai-gateway.svc:80/v1"],
      ["runtime", "BERTH_INFERENCE_API", "openai"],
    ]);
  });

  it("the destination's hosts name it, over its scheme and path; one address of cidrs stands in for hosts", () => {
    const named = withGateway((d) => {
      delete d.service;
      d.cidrs = ["10.40.30.0/24"];
      d.ports = [{ port: 8443 }, { port: 443 }];
      d.hosts = ["llm.internal.example.com"];
      d.inference = { scheme: "https", path: "/openai/v1" };
    });
    expect(inferenceEnv(renderObjects(EXAMPLE_WORKSPACES.persistent, { ...ALL_REQUIRED, profile: [named] }))[0]).toEqual(["runtime", "BERTH_INFERENCE_URL", "https://llm.internal.example.com:8443/openai/v1"]);
    const single = withGateway((d) => {
      delete d.service;
      d.cidrs = ["10.40.30.7/32"];
      d.ports = [{ port: 8080 }];
    });
    expect(inferenceEnv(renderObjects(EXAMPLE_WORKSPACES.persistent, { ...ALL_REQUIRED, profile: [single] }))[0]).toEqual(["runtime", "BERTH_INFERENCE_URL", "http://10.40.30.7:8080/v1"]);
  });

  it("a destination that does not say where its model answers: egress, and no URL", () => {
    const silent = withGateway((d) => delete d.inference);
    const objects = renderObjects(EXAMPLE_WORKSPACES.persistent, { ...ALL_REQUIRED, profile: [silent] });
    expect(inferenceEnv(objects)).toEqual([["runtime", "BERTH_INFERENCE_CREDENTIAL", "BERTH_INFERENCE_GATEWAY_KEY"]]);
    expect(ofKind(objects, "NetworkPolicy").map((p) => p.metadata?.name)).toContain("egress-inference");
  });

  it("cidrs of more than one address and no hosts: refused, naming the field, nothing rendered", () => {
    const wide = withGateway((d) => {
      delete d.service;
      d.cidrs = ["10.40.30.0/24"];
      d.ports = [{ port: 8080 }];
    });
    const rsp = runFunction(request(EXAMPLE_WORKSPACES.persistent, { required: { ...ALL_REQUIRED, profile: [wide] } }));
    expect(rsp.desired?.resources ?? {}).toEqual({});
    const messages = [...(rsp.conditions ?? []), ...(rsp.results ?? [])].map((c) => c.message ?? "").join("\n");
    expect(messages).toContain('spec.capabilities.inference.destination: reviewed destination "model-gateway" of WorkspaceProfile "standard" must list hosts or be one address');
  });
});
