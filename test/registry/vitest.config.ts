import { defineConfig } from "vitest/config";

// The suite that needs CNCF distribution, the OCI registry test/conformance/controlplane/build.sh
// --node builds (npm run test:registry): the evidence export pushing to a real registry. Without
// the binary its tests skip, saying so; CI runs it after the build, where nothing may skip.
export default defineConfig({
  test: {
    include: ["test/registry/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
