import { defineConfig } from "vitest/config";

// The reference runtimes' suite (npm run test:agents): builds the runtime-opencode and
// runtime-codex images from their pinned sources (image/sources.yaml: the npm registry and
// deb.debian.org), and runs the real agents in them on a task against a scripted model server,
// the MCP gate and a real MCP server, all on loopback. Needs root to run an image's root
// filesystem; CI runs it.
export default defineConfig({
  test: {
    include: ["test/agents/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    // Each agent's binary is hundreds of MB: one file at a time.
    fileParallelism: false,
  },
});
