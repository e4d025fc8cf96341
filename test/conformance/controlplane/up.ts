// Starts the conformance control plane for manual use and keeps it running until
// Ctrl-C (or SIGTERM). Prints the kubeconfig path and the function TLS folder.
//
//   npx tsx test/conformance/controlplane/up.ts [--function NAME --port PORT] [--no-crossplane]
//
// With --port, Crossplane is pointed at a function process on localhost:PORT
// (start it with --tls-server-certs-dir set to the printed function TLS folder).
import { startControlPlane } from "./controlplane.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const cp = await startControlPlane({
  keepRunDir: process.argv.includes("--keep"),
  crossplane: !process.argv.includes("--no-crossplane"),
});
const port = arg("--port");
const fnName = arg("--function") ?? "function-berth";
if (port) await cp.registerFunction(fnName, Number(port));

const out = [
  `KUBECONFIG=${cp.kubeconfig}`,
  `BERTH_CP_RUN_DIR=${cp.runDir}`,
  `BERTH_CP_LOGS=${cp.logDir}`,
  ...(cp.functionTLSDir ? [`BERTH_FUNCTION_TLS_DIR=${cp.functionTLSDir}`] : []),
  `CROSSPLANE=${cp.crossplaneBinary}`,
  ...(cp.crossplaneCLI ? [`CROSSPLANE_CLI=${cp.crossplaneCLI}`] : []),
  ...(port ? [`# Crossplane dials ${fnName} at dns:///localhost:${port}`] : [`# register a function later: re-run with --port, or call registerFunction()`]),
];
process.stdout.write(out.join("\n") + "\n");
process.stderr.write("[controlplane] running; Ctrl-C to stop\n");

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await cp.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
setInterval(() => {}, 1 << 30);
