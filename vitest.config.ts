import { defineConfig } from "vitest/config";

// The fast suite: plain function calls and a real gRPC server on loopback. The conformance
// suite against a real API server has its own config (test/conformance/vitest.config.ts).
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/grpc/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
