import { defineConfig } from "vitest/config";

// The function image suite (npm run test:image): downloads the pinned sources of
// image/sources.yaml, builds the image twice, and runs it. Needs the npm registry and
// deb.debian.org, and root to run the image's root filesystem; CI runs it.
export default defineConfig({
  test: {
    include: ["test/image/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 600_000,
  },
});
