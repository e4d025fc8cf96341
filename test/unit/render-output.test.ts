// `npm run render` must print what `crossplane render` prints. The expected files in
// test/golden/crossplane-render-*.yaml are the real CLI's output (crossplane CLI v2.5.0 with
// core v2.4.0 and --crossplane-binary, against this function run with --insecure), written
// by test/conformance/crossplane-cli.ts, which CI runs again to check they still match.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareKeys, goYAML } from "../../functions/berth/tooling/go-yaml.js";
import { renderConverged, renderLocally } from "../../functions/berth/tooling/local-render.js";
import { renderOutput, renderUID } from "../../functions/berth/tooling/render-output.js";
import { loadObject, loadObjects } from "../fixtures.js";
import { RENDER_EXAMPLES } from "../render-examples.js";

describe("npm run render prints what crossplane render prints, byte for byte", () => {
  it.each(RENDER_EXAMPLES.map((e) => [e.name, e] as const))("%s", async (name, example) => {
    const xr = loadObject(example.document);
    const { response } = await renderLocally(xr, example.required.flatMap(loadObjects));
    expect(renderOutput(xr, response)).toBe(readFileSync(`test/golden/crossplane-render-${name}.yaml`, "utf8"));
  });

  it.each(RENDER_EXAMPLES.filter((e) => e.converge).map((e) => [e.name, e] as const))("%s, converged (--converge)", async (name, example) => {
    const xr = loadObject(example.document);
    const reconciles = await renderConverged(xr, example.required.flatMap(loadObjects));
    expect(reconciles.length).toBeGreaterThan(1);
    expect(renderOutput(xr, reconciles.at(-1)!.response)).toBe(readFileSync(`test/golden/crossplane-render-${name}-converged.yaml`, "utf8"));
  });
});

describe("Go's YAML, as sigs.k8s.io/yaml writes it", () => {
  it("orders keys as go-yaml does: digits by value, non-letters first", () => {
    expect(["item10", "item9", "Zeta", "_under", "alpha", "Alpha"].sort(compareKeys)).toEqual(["_under", "Alpha", "Zeta", "alpha", "item9", "item10"]);
  });

  it("quotes what would read back as another type, and what plain YAML cannot hold", () => {
    expect(goYAML({ a: "True", b: "123", c: "2024-01-01T00:00:00Z", d: "", e: "a: b", f: "[x]", g: "- x", h: "plain text", i: "it's: here", j: 1, k: false, l: null })).toBe(
      [`a: "True"`, `b: "123"`, `c: "2024-01-01T00:00:00Z"`, `d: ""`, `e: 'a: b'`, `f: '[x]'`, `g: '- x'`, `h: plain text`, `i: 'it''s: here'`, `j: 1`, `k: false`, `l: null`, ""].join("\n"),
    );
  });

  it("folds long strings at the first space past column 80, two spaces deeper", () => {
    const message = "Pipeline step \"main\": hello from fn this is a deliberately long message that should exceed eighty columns when rendered: yes";
    expect(goYAML({ status: { message } })).toBe(
      `status:\n  message: 'Pipeline step "main": hello from fn this is a deliberately long message\n    that should exceed eighty columns when rendered: yes'\n`,
    );
  });

  // Each expected text is what sigs.k8s.io/yaml v1.6.0 (go.yaml.in/yaml/v2 v2.4.4, what the
  // Crossplane CLI 2.5.0 links) wrote for {k: {v: s}, z: [s]}, recorded from a Go program.
  it.each([
    ["a\nb\n", "k:\n  v: |\n    a\n    b\nz:\n- |\n  a\n  b\n"],
    ["a\nb", "k:\n  v: |-\n    a\n    b\nz:\n- |-\n  a\n  b\n"],
    ["a\n\nb\n", "k:\n  v: |\n    a\n\n    b\nz:\n- |\n  a\n\n  b\n"],
    ["a\nb\n\n", "k:\n  v: |+\n    a\n    b\n\nz:\n- |+\n  a\n  b\n\n"],
    ["\na\n", "k:\n  v: |2\n\n    a\nz:\n- |2\n\n  a\n"],
    [" a\nb\n", "k:\n  v: |2\n     a\n    b\nz:\n- |2\n   a\n  b\n"],
    ["a \nb\n", "k:\n  v: \"a \\nb\\n\"\nz:\n- \"a \\nb\\n\"\n"],
    ["a\n b\n", "k:\n  v: |\n    a\n     b\nz:\n- |\n  a\n   b\n"],
    ["tab\there\nx\n", "k:\n  v: \"tab\\there\\nx\\n\"\nz:\n- \"tab\\there\\nx\\n\"\n"],
    ["tab\tonly", "k:\n  v: \"tab\\tonly\"\nz:\n- \"tab\\tonly\"\n"],
    ["cr\r\nx\n", "k:\n  v: \"cr\\r\\nx\\n\"\nz:\n- \"cr\\r\\nx\\n\"\n"],
    ["x\n", "k:\n  v: |\n    x\nz:\n- |\n  x\n"],
    ["line1\nkey: v\n", "k:\n  v: |\n    line1\n    key: v\nz:\n- |\n  line1\n  key: v\n"],
    ["\u00e9\n\u00fc\n", "k:\n  v: |\n    \u00e9\n    \u00fc\nz:\n- |\n  \u00e9\n  \u00fc\n"],
    ["- a\n- b\n", "k:\n  v: |\n    - a\n    - b\nz:\n- |\n  - a\n  - b\n"],
    ["Fix it.\n\tKeep the API.\n", "k:\n  v: \"Fix it.\\n\\tKeep the API.\\n\"\nz:\n- \"Fix it.\\n\\tKeep the API.\\n\"\n"],
  ])("writes %j as a literal block where go-yaml can, double-quoted where it cannot", (s, expected) => {
    expect(goYAML({ k: { v: s }, z: [s] })).toBe(expected);
  });

  it("writes lists at their key's indentation, and empty collections inline", () => {
    expect(goYAML({ a: [{ b: 1, c: [] }, "x"], d: {} })).toBe("a:\n- b: 1\n  c: []\n- x\nd: {}\n");
  });
});

describe("render's XR UID", () => {
  it("is the name-based UUID Crossplane derives when the XR has none, and the XR's own otherwise", () => {
    // The value Crossplane's render printed for example.org/v1alpha1 WorkspaceProfile my-profile.
    expect(renderUID({ apiVersion: "example.org/v1alpha1", kind: "WorkspaceProfile", metadata: { name: "my-profile" } })).toBe("43e62ebe-16f4-5268-a46c-d4570af14abd");
    expect(renderUID({ apiVersion: "v1", kind: "X", metadata: { name: "n", uid: "abc" } })).toBe("abc");
  });
});
