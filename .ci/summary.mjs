// Prints vitest's JSON report as the plain closing line CI reads: "N passed, N failed".
// --none-skipped: exit 1 if any test was skipped (CI has every input, so nothing may skip).
import { readFileSync } from "node:fs";

const noneSkipped = process.argv.includes("--none-skipped");

let passed = 0;
let failed = 0;
let skipped = 0;
// A file whose setup failed reports its tests as skipped, not failed: count the file.
let failedFiles = 0;
// The names of what failed, so that the closing lines of a long log say where to look.
const failures = [];
for (const file of process.argv.slice(2).filter((a) => !a.startsWith("--"))) {
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
  for (const result of report.testResults ?? []) {
    const failedTests = (result.assertionResults ?? []).filter((a) => a.status === "failed");
    if (result.status === "failed" && failedTests.length === 0) {
      failedFiles += 1;
      failures.push(`${result.name}: ${firstLine(result.message)}`);
    }
    for (const test of failedTests) failures.push(`${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  }
}
for (const failure of failures) console.log(`FAILED ${failure}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}${failedFiles > 0 ? `, ${failedFiles} test file(s) failed before their tests ran` : ""}`);
if (noneSkipped && skipped > 0) {
  console.log("tests were skipped, but CI gives them every input they need");
  process.exitCode = 1;
}

function firstLine(message) {
  return (message ?? "").split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 300) ?? "";
}
