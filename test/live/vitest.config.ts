import { defineConfig } from "vitest/config";

// The live tier: the local control plane plus a real node (test/live/cluster.ts), one file,
// its checks in order on one cluster (the run's outcome is checked after the probes that need
// the runtime running, and the machine is checked after everything has stopped).
export default defineConfig({
  test: {
    include: ["test/live/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    sequence: { concurrent: false },
    // A live failure is a finding, not a flake: never retry.
    retry: 0,
  },
});
