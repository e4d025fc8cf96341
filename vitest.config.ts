import { defineConfig } from "vitest/config";

// The fast suite: plain function calls and a real gRPC server on loopback. The conformance
// suite against a real API server has its own config (test/conformance/vitest.config.ts).
// BERTH_TEST_REPORT=<file> also writes vitest's JSON report there (CI reads it, including from
// `npm cit`, which passes no arguments through to vitest).
const report = process.env.BERTH_TEST_REPORT;
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/grpc/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    ...(report ? { reporters: ["default", "json"], outputFile: { json: report } } : {}),
  },
});
