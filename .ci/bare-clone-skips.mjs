// Checks the vitest JSON report of `npm cit` in a bare clone (nothing beside it, no network):
// every test passed except the ones that need the upstream CRDs, which must be skipped, and at
// least one of those must exist (else the check would pass for a suite that never asks).
//   node .ci/bare-clone-skips.mjs <report.json>
import { readFileSync } from "node:fs";

const NEEDS_CRDS = "provider objects validate against the upstream CRDs";
const report = JSON.parse(readFileSync(process.argv[2], "utf8"));
const tests = report.testResults.flatMap((file) => file.assertionResults.map((t) => ({ ...t, file: file.name })));
const name = (t) => [...t.ancestorTitles, t.title].join(" > ");
const needsCRDs = (t) => t.ancestorTitles.includes(NEEDS_CRDS);

const problems = [
  ...tests.filter((t) => t.status === "failed").map((t) => `failed: ${name(t)}`),
  ...tests.filter((t) => t.status !== "passed" && t.status !== "failed" && !needsCRDs(t)).map((t) => `${t.status} but needs no upstream CRD: ${name(t)}`),
  ...tests.filter((t) => t.status !== "skipped" && t.status !== "pending" && needsCRDs(t)).map((t) => `ran without the upstream CRDs: ${name(t)}`),
];
const skipped = tests.filter(needsCRDs).length;
if (skipped === 0) problems.push(`no test under "${NEEDS_CRDS}" was found`);
const passed = tests.filter((t) => t.status === "passed").length;
console.log(`bare clone: ${passed} passed, ${skipped} skipped (they need the upstream CRDs), ${tests.length - passed - skipped} other`);
for (const p of problems) console.log(`  ${p}`);
process.exitCode = problems.length > 0 || report.numFailedTests > 0 ? 1 : 0;
