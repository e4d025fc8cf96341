// docs/api.md is generated from the schemas the XRDs are generated from. These tests keep the
// committed page in step and prove it says what a reader comes for: each field's type, default,
// rules (CEL ones with their messages) and description.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_REFERENCE_PATH, apiReference } from "../../functions/berth/tooling/api-reference.js";
import { COMPOSITE_KINDS } from "../../functions/berth/tooling/xrd.js";

const page = apiReference(COMPOSITE_KINDS);

/** The lines of a kind's section, from its heading to the next. */
const section = (kind: string) => (page.split(/^## /m).find((s) => s.startsWith(`${kind}\n`)) ?? "").split("\n");

/** The table row of a field in a kind's section. */
const row = (kind: string, path: string) => section(kind).find((line) => line.startsWith(`| \`${path}\` |`));

describe("docs/api.md", () => {
  it("is generated from the zod schemas", () => {
    expect(readFileSync(API_REFERENCE_PATH, "utf8"), `${API_REFERENCE_PATH} differs from what the schemas produce: run \`npm run generate\` and commit it`).toBe(page);
  });

  it("has a section for every kind, in the order of the XRDs", () => {
    expect(page.match(/^## .*$/gm)).toEqual(COMPOSITE_KINDS.map((k) => `## ${k.kind}`));
  });

  it("gives a field's type, default, rules and description", () => {
    expect(row("DeveloperWorkspace", "spec.lifecycle.deletion")).toBe(
      "| `spec.lifecycle.deletion` | enum | optional | `Delete` | one of `Delete`, `Retain` | What happens to the volume when the workspace is deleted. |",
    );
    expect(row("ExecutionWorkspaceClass", "spec.lifecycle.idleTimeoutMinutes")).toBe(
      "| `spec.lifecycle.idleTimeoutMinutes` | integer | optional | `30` | minimum 1<br>maximum 10080 |  |",
    );
    expect(row("WorkspaceProfile", "spec.dns.podSelector")).toBe('| `spec.dns.podSelector` | map of string | optional | `{"k8s-app":"kube-dns"}` | values: maxLength 63 |  |');
  });

  it("flattens arrays of objects into [] paths, with the items' rules", () => {
    expect(row("DeveloperWorkspace", "spec.capabilities.mcp[].tools[]")).toBe(
      "| `spec.capabilities.mcp[].tools[]` | array of string | optional |  | maxItems 64<br>items: pattern `^[^\\x00-\\x1f\\x7f]*$`<br>items: maxLength 128 | Declared tools, enforced: the runtime reaches this server only through the profile's MCP gate, which offers and forwards only these names (compared exactly) and refuses every other method. Omitted: no gate, the whole server is reachable. |",
    );
  });

  it("escapes a | inside a cell, and names a quantity rather than repeating its pattern", () => {
    expect(row("WorkspaceProfile", "spec.podSecurity.version")).toBe("| `spec.podSecurity.version` | string | optional | `latest` | pattern `^(latest\\|v1\\.[0-9]{1,2})$` |  |");
    expect(row("DeveloperWorkspace", "spec.storage.size")).toBe("| `spec.storage.size` | quantity | required |  |  |  |");
  });

  it("gives CEL rules with their messages: immutability on spec, and the rules on the whole object", () => {
    expect(row("WorkspaceCheckpoint", "spec")).toBe(
      "| `spec` | object | required |  | CEL `self.workspaceRef == oldSelf.workspaceRef && self.classRef == oldSelf.classRef`: spec.workspaceRef and spec.classRef are immutable |  |",
    );
    expect(section("DeveloperWorkspace")).toContain("- CEL `self.metadata.name == self.spec.workspaceID + '-xr'`: metadata.name must be &lt;spec.workspaceID>-xr");
  });
});
