import { defineConfig } from "vitest/config";

// The image suite (npm run test:image): downloads the pinned sources of image/sources.yaml,
// builds the function image and the evidence image twice each, and runs them (the evidence
// image's git too). Needs the npm registry and deb.debian.org, and root to run an image's root
// filesystem; CI runs it.
export default defineConfig({
  test: {
    include: ["test/image/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
  },
});
