// Starts the live cluster and either keeps it running for manual use until Ctrl-C (or SIGTERM),
// or runs one command against it and stops it (exiting with the command's status):
//
//   sudo npx tsx test/live/up.ts        # prints KUBECONFIG; crictl/ctr need the node's socket
//   sudo npx tsx test/live/up.ts -- npx vitest run --config test/conformance/vitest.config.ts
//
// The command gets KUBECONFIG and BERTH_CONFORMANCE_KUBECONFIG (so the conformance suite runs
// on this cluster as it is: `npm run test:conformance:live`).
import { spawn } from "node:child_process";
import { startLiveCluster } from "./cluster.js";

const separator = process.argv.indexOf("--");
const command = separator >= 0 ? process.argv.slice(separator + 1) : [];

const live = await startLiveCluster();
let stopping = false;
const shutdown = async (code = 0) => {
  if (stopping) return;
  stopping = true;
  await live.stop();
  process.exit(code);
};
process.on("SIGINT", () => void shutdown(130));
process.on("SIGTERM", () => void shutdown(143));

if (command.length > 0) {
  const child = spawn(command[0]!, command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, KUBECONFIG: live.kubeconfig, BERTH_CONFORMANCE_KUBECONFIG: live.kubeconfig },
  });
  child.on("error", (e) => {
    process.stderr.write(`${command[0]}: ${e.message}\n`);
    void shutdown(127);
  });
  child.on("exit", (code, signal) => void shutdown(code ?? (signal ? 128 : 1)));
} else {
  process.stdout.write(
    [
      `KUBECONFIG=${live.kubeconfig}`,
      `BERTH_LIVE_NODE_DIR=${live.node.dir}`,
      `BERTH_LIVE_NETNS=${live.network.netns}`,
      `# crictl: nsenter --net=/run/netns/${live.network.netns} ${live.node.binDir}/crictl --runtime-endpoint unix://${live.node.dir}/containerd/containerd.sock ps`,
    ].join("\n") + "\n",
  );
  setInterval(() => {}, 1 << 30);
}
