import { z } from "zod";
import { dnsLabel, text } from "./fields.js";
import { positiveQuantity } from "./quantity.js";

// Capabilities are how a workspace asks for egress and API authority. Both workspace kinds
// declare them with this one schema; each names a destination the profile has reviewed.

/** A capability that opens egress to one destination the profile has reviewed. */
const destinationRef = z.strictObject({
  destination: dnsLabel(40).describe("Name of a destination in the profile's spec.destinations."),
});

export const kubernetesAccess = z.enum(["none", "read", "edit"]);

export const capabilitiesSchema = z
  .strictObject({
  git: destinationRef.optional().describe("Where the source is checked out from."),
  inference: destinationRef.optional().describe("The model service the runtime calls."),
  mcp: z
    .array(
      destinationRef.extend({
        name: dnsLabel(40),
        tools: z.array(text(128)).max(64).optional().describe(
            "Declared tools, enforced: the runtime reaches this server only through the profile's MCP gate, which offers and forwards only these names (compared exactly) and refuses every other method. Omitted: no gate, the whole server is reachable.",
          ),
      }),
    )
    .max(16)
    .default([])
    .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
  registries: z.array(destinationRef).max(16).default([]),
  kubernetes: z
    .strictObject({
      access: kubernetesAccess.default("none").describe("Kubernetes API authority inside the workspace namespace; none by default."),
      destination: dnsLabel(40).optional().describe("The reviewed destination of the Kubernetes API server (required unless access is none)."),
      resources: z
        .strictObject({ cpu: positiveQuantity, memory: positiveQuantity })
        .optional()
        .describe(
          "With access edit: the CPU and memory the pods the runtime makes may use between them, on top of the workspace's own resources (which its runtime uses whole); the quota holds the sum. Without it the runtime can make no pod that asks for anything.",
        ),
    })
    .prefault({})
    .superRefine((k, ctx) => {
      if (k.access !== "none" && k.destination === undefined) {
        ctx.addIssue({ code: "custom", path: ["destination"], message: `Required when access is ${k.access}` });
      }
      if (k.resources !== undefined && k.access !== "edit") {
        ctx.addIssue({ code: "custom", path: ["resources"], message: `only with access edit: a runtime with access ${k.access} makes no pods` });
      }
    })
    .meta({
      "x-kubernetes-validations": [
        { rule: "!has(self.access) || self.access == 'none' || has(self.destination)", message: "destination is required unless access is none" },
        { rule: "!has(self.resources) || (has(self.access) && self.access == 'edit')", message: "resources only with access edit" },
      ],
    }),
  })
  .superRefine((c, ctx) => {
    const names = new Set<string>();
    c.mcp.forEach((m, i) => {
      if (names.has(m.name)) ctx.addIssue({ code: "custom", path: ["mcp", i, "name"], message: `duplicate MCP server name "${m.name}"` });
      names.add(m.name);
    });
  });

export type Capabilities = z.output<typeof capabilitiesSchema>;
