import { defineConfig } from "vitest/config";

// The fault suite (npm run test:faults): faults injected into the running system, one after the
// other on one fleet of workspaces on the local control plane (faults.test.ts), and the function
// alone under overload (load.test.ts). Needs the control-plane build (npm run controlplane:build),
// the upstream CRDs (BERTH_UPSTREAM_CRDS or a download) and the bundle (npm run bundle).
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 900_000,
    // The load test would steal the CPU the fleet's converge times are measured on.
    fileParallelism: false,
    retry: 0,
  },
});
