// The licence package.json declares is the one the repository ships: LICENSE holds the Apache
// License 2.0 as apache.org publishes it (https://www.apache.org/licenses/LICENSE-2.0.txt).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("the licence", () => {
  it("package.json says Apache-2.0, and LICENSE is the Apache License 2.0, byte for byte", () => {
    expect(JSON.parse(readFileSync("package.json", "utf8")).license).toBe("Apache-2.0");
    const license = readFileSync("LICENSE", "utf8");
    expect(license.startsWith("\n                                 Apache License\n                           Version 2.0, January 2004\n                        http://www.apache.org/licenses/\n")).toBe(true);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
    expect(license).toContain("APPENDIX: How to apply the Apache License to your work.");
    // sha256 of apache.org's LICENSE-2.0.txt.
    expect(createHash("sha256").update(license).digest("hex")).toBe("cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30");
  });
});
