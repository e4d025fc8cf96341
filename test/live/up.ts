// Starts the live cluster for manual use and keeps it running until Ctrl-C (or SIGTERM).
//
//   sudo npx tsx test/live/up.ts        # prints KUBECONFIG; crictl/ctr need the node's socket
import { startLiveCluster } from "./cluster.js";

const live = await startLiveCluster();
process.stdout.write(
  [
    `KUBECONFIG=${live.kubeconfig}`,
    `BERTH_LIVE_NODE_DIR=${live.node.dir}`,
    `BERTH_LIVE_NETNS=${live.network.netns}`,
    `# crictl: nsenter --net=/run/netns/${live.network.netns} ${live.node.binDir}/crictl --runtime-endpoint unix://${live.node.dir}/containerd/containerd.sock ps`,
  ].join("\n") + "\n",
);
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await live.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
setInterval(() => {}, 1 << 30);
