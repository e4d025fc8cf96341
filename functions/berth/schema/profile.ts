import { z } from "zod";
import { cidr, dnsLabel, dnsSubdomain, image, ip, port, protocol, text } from "./fields.js";
import { positiveQuantity } from "./quantity.js";

/** Where an HTTP service behind a destination answers, on the host and port the destination gives: its scheme and path. */
const httpEndpoint = (defaultPath: string) => ({
  scheme: z.enum(["http", "https"]).default("http"),
  path: z
    .string()
    .max(256)
    .regex(/^\/[A-Za-z0-9._~\/-]*$/, "must be an absolute URL path")
    .default(defaultPath),
});

/**
 * A reviewed egress destination. Workspaces name destinations; only the profile says where
 * they lead, so a workspace document stays cluster-agnostic and cannot widen its own egress.
 * A destination is either CIDR blocks with ports, or an in-cluster Service whose selector and
 * target ports Berth resolves into a pod selector.
 */
export const destinationSchema = z
  .strictObject({
    name: dnsLabel(40).describe("Name workspaces use to refer to this destination."),
    description: text(256).optional(),
    cidrs: z.array(cidr).min(1).max(32).optional().describe("IP blocks this destination allows egress to."),
    ports: z
      .array(z.strictObject({ port, protocol: protocol.default("TCP") }))
      .min(1)
      .max(16)
      .optional()
      .describe("Ports allowed on the CIDR blocks (required with cidrs)."),
    service: z
      .strictObject({ namespace: dnsLabel(63), name: dnsLabel(63) })
      .optional()
      .describe("An in-cluster Service: egress is allowed to its pods on its target ports."),
    hosts: z
      .array(dnsSubdomain)
      .max(16)
      .optional()
      .describe(
        "The host names this destination answers for. A DeveloperWorkspace with a git credential checks out only from a host of its git destination, since the checkout presents the credential to it (a Service destination answers for <name>.<namespace>.svc and <name>.<namespace>.svc.cluster.local without listing them). The evidence export sends the registry credential to a token service only on the registry's own host or one of these.",
      ),
    mcp: z
      .strictObject(httpEndpoint("/mcp"))
      .optional()
      .describe(
        "Where the MCP server behind this destination answers (Streamable HTTP), for the MCP gate that enforces declared tools: the Service's first port, or the one address and first port of cidrs. Defaults to http and /mcp.",
      ),
    inference: z
      .strictObject({
        api: z.enum(["openai"]).default("openai").describe("The API the model service speaks: `openai`, OpenAI's (chat completions and responses)."),
        ...httpEndpoint("/v1"),
      })
      .optional()
      .describe(
        "Where the model service behind this destination answers, for a workspace whose inference capability names it: the runtime is given the URL as BERTH_INFERENCE_URL and the API as BERTH_INFERENCE_API. The host is the first of hosts, else the Service's <name>.<namespace>.svc, else the one address of cidrs; the port is the Service's first port or the first of ports. Defaults to openai, http and /v1.",
      ),
    caBundle: z
      .strictObject({
        namespace: dnsLabel(63),
        name: dnsSubdomain,
        key: z.string().min(1).max(253).regex(/^[-._a-zA-Z0-9]+$/, "must be a ConfigMap key").default("ca.crt"),
      })
      .optional()
      .describe(
        "A ConfigMap holding the PEM CA bundle this destination's TLS certificate chains to, for a private CA. Berth copies it into each workspace that uses the destination, and the container that talks TLS to it (the checkout for git, the evidence export for the evidence registry) trusts it alone.",
      ),
  })
  .check((ctx) => {
    const d = ctx.value;
    if ((d.cidrs === undefined) === (d.service === undefined)) {
      ctx.issues.push({ code: "custom", input: d, path: [], message: "must set exactly one of cidrs or service" });
    }
    if (d.cidrs !== undefined && d.ports === undefined) {
      ctx.issues.push({ code: "custom", input: d, path: ["ports"], message: "Required with cidrs" });
    }
    if (d.service !== undefined && d.ports !== undefined) {
      ctx.issues.push({ code: "custom", input: d, path: ["ports"], message: "must not be set with service: the Service's target ports are used" });
    }
  })
  .meta({ "x-kubernetes-validations": [{ rule: "has(self.cidrs) != has(self.service)", message: "must set exactly one of cidrs or service" }] });

export type Destination = z.output<typeof destinationSchema>;

/**
 * How the profile's storage bounds a persistent volume's size:
 * - `Runtime`: writes past the size fail while the workspace runs (for example XFS project
 *   quotas); the only declaration under which persistent workspaces are accepted.
 * - `AdmissionOnly`: the size is checked when the volume is created and never again
 *   (local-path, hostPath provisioners).
 * - `None`: nothing bounds the size.
 */
export const capacityEnforcement = z.enum(["Runtime", "AdmissionOnly", "None"]);

const resourceList = z.strictObject({ cpu: positiveQuantity, memory: positiveQuantity });

export const workspaceProfileSpecSchema = z.strictObject({
  podSecurity: z
    .strictObject({
      level: z.enum(["restricted"]).default("restricted").describe("Pod Security Standard enforced on workspace namespaces; only restricted is offered."),
      version: z
        .string()
        .regex(/^(latest|v1\.[0-9]{1,2})$/, 'must be "latest" or a Kubernetes minor version such as "v1.34"')
        .default("latest"),
    })
    .prefault({}),
  storage: z.strictObject({
    storageClassName: dnsLabel(63).describe("The quota storage class persistent workspaces use."),
    capacityEnforcement: capacityEnforcement.describe("The operator's declaration of how the storage class bounds volume size."),
    maxSize: positiveQuantity.describe("The largest volume a workspace may request."),
  }),
  runtimes: z
    .array(
      z.strictObject({
        name: dnsLabel(40),
        image,
        command: z.array(text(1024)).max(16).optional(),
        args: z.array(text(1024)).max(64).optional(),
      }),
    )
    .min(1)
    .max(32)
    .describe("Reviewed runtime images, chosen by workspaces through spec.runtime.profile."),
  checkout: z.strictObject({
    image: image.describe("Image of the init container that checks out the source; it alone receives the Git credential."),
  }),
  mcpGate: z
    .strictObject({
      image: image.describe("Image of the MCP gate (Berth's mcp-gate image, built by `npm run image -- --gate`)."),
      resources: resourceList.default({ cpu: "100m", memory: "256Mi" }).describe("The gate's CPU and memory, added to each gated workspace's quota."),
    })
    .optional()
    .describe(
      "The MCP gate: a pod in each workspace that declares MCP tools, the only one that reaches those MCP servers, offering and forwarding only the declared tools. Required for any workspace that declares spec.capabilities.mcp[].tools.",
    ),
  evidence: z
    .strictObject({
      image: image.describe("Image of Berth's evidence program (`npm run image -- --evidence`): the collector beside the runtime and the export that pushes."),
      destination: dnsLabel(40).describe("The reviewed destination (spec.destinations) of the OCI registry evidence is pushed to; only the export's pod reaches it."),
      repository: z
        .string()
        .max(255)
        .regex(/^[A-Za-z0-9.-]+(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/, "must be an OCI repository: host[:port]/path, without scheme or tag")
        .describe("The repository each workspace's evidence is pushed to, tagged with the workspace ID."),
      resources: resourceList.default({ cpu: "100m", memory: "128Mi" }).describe("CPU and memory of the collector and of the export, each; added to the workspace's quota."),
      collectTimeoutSeconds: z
        .int()
        .min(60)
        .max(86400)
        .default(900)
        .describe(
          "How long after the runtime ends the collector keeps the evidence for the export to fetch (the workload pod's terminationGracePeriodSeconds); the bound of export retries. Kubernetes' namespace controller also waits this long before it finishes deleting a workspace whose pod was still running.",
        ),
    })
    .optional()
    .describe("Where finished DeveloperWorkspaces with lifecycle.evidence.exportBeforeCleanup push their evidence (outcome, verification, proposed changes) as one OCI artifact. Required for any workspace that sets it."),
  user: z
    .strictObject({
      uid: z.int().min(1).max(2147483647).default(65532),
      gid: z.int().min(1).max(2147483647).default(65532),
    })
    .prefault({})
    .describe("Non-root identity every workspace container runs as."),
  destinations: z.array(destinationSchema).max(128).default([]),
  dns: z
    .strictObject({
      namespace: dnsLabel(63).default("kube-system"),
      podSelector: z.record(z.string().max(63), z.string().max(63)).default({ "k8s-app": "kube-dns" }),
      nameservers: z
        .array(ip)
        .min(1)
        .max(3)
        .optional()
        .describe(
          "The resolver workspace pods ask instead of the cluster's DNS (their dnsPolicy becomes None). Cluster DNS forwards any name upstream, so a name a workspace looks up can carry data out; point workspaces at a resolver that answers the cluster's names and the reviewed hosts only, and select its pods with podSelector.",
        ),
      clusterDomain: dnsSubdomain.optional().describe("The cluster's DNS domain, for the search path of pods that use nameservers (cluster.local unless set)."),
    })
    .prefault({})
    .describe("Where the DNS workspaces use runs; the only egress every workspace has."),
  limits: z.strictObject({
    defaultRequest: resourceList,
    default: resourceList,
    max: resourceList.describe("The largest CPU and memory a workspace may request."),
  }),
}).check((ctx) => {
  const evidence = ctx.value.evidence;
  if (evidence !== undefined && !ctx.value.destinations.some((d) => d.name === evidence.destination)) {
    ctx.issues.push({ code: "custom", input: evidence.destination, path: ["evidence", "destination"], message: `names no destination in spec.destinations ("${evidence.destination}")` });
  }
});

export type WorkspaceProfileSpec = z.output<typeof workspaceProfileSpecSchema>;
