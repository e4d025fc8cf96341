import type { NamespaceProfile } from "../workspace.js";
import { gateResources } from "./mcp-gate.js";

/**
 * CPU and memory of what runs beside the workspace's own runtime: the MCP gate, the evidence
 * collector and export (which run at the same time: the collector holds the evidence until the
 * export has pushed it), and with access edit the pods the runtime makes. The quota holds their
 * sum with the workspace's, and the LimitRange's ceiling lets the largest of them in.
 */
export function componentResources(p: NamespaceProfile): { cpu: string; memory: string }[] {
  const gate = gateResources(p);
  return [...(gate ? [gate] : []), ...(p.evidence ? [p.evidence.resources, p.evidence.resources] : []), ...(p.runtimeMade ? [p.runtimeMade] : [])];
}
