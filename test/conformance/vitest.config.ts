import { defineConfig } from "vitest/config";

// The conformance suite: real API server, real Crossplane, Berth's function over gRPC.
// globalSetup starts the local control plane, or uses BERTH_CONFORMANCE_KUBECONFIG (kind).
// The files share one cluster but touch disjoint workspaces, so they run side by side: most
// of their time is spent waiting for controllers, not computing.
export default defineConfig({
  test: {
    include: ["test/conformance/**/*.test.ts"],
    globalSetup: ["test/conformance/setup.ts"],
    testTimeout: 240_000,
    hookTimeout: 300_000,
    fileParallelism: true,
    maxWorkers: 3,
    // A conformance failure is a finding, not a flake: never retry.
    retry: 0,
  },
});
