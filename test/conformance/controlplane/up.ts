// Starts the conformance control plane for manual use and keeps it running until
// Ctrl-C (or SIGTERM). Prints the kubeconfig path and the function TLS folder.
//
//   npx tsx test/conformance/controlplane/up.ts [--keep] [--no-crossplane] [--function NAME]
//       [--port PORT | -- COMMAND ARGS...]
//
// With `-- COMMAND ARGS...` the function process is started too, serving TLS on a free port
// (`--address=127.0.0.1:PORT --tls-server-certs-dir=DIR` are appended), e.g.
//   npx tsx test/conformance/controlplane/up.ts -- node --import tsx functions/berth/main.ts
// With --port, Crossplane is pointed at a function you run yourself on localhost:PORT
// (give it --tls-server-certs-dir=<the printed BERTH_FUNCTION_TLS_DIR>).
import { startControlPlane } from "./controlplane.js";
import { installedFunction } from "../../support/function-name.js";

const dashdash = process.argv.indexOf("--");
const own = dashdash >= 0 ? process.argv.slice(0, dashdash) : process.argv;
const fnCommand = dashdash >= 0 ? process.argv.slice(dashdash + 1) : [];

function arg(name: string): string | undefined {
  const i = own.indexOf(name);
  return i >= 0 ? own[i + 1] : undefined;
}

const cp = await startControlPlane({
  keepRunDir: own.includes("--keep"),
  crossplane: !own.includes("--no-crossplane"),
});
const fnName = arg("--function") ?? installedFunction().name;
let port = arg("--port");
try {
  if (fnCommand[0]) {
    const f = await cp.startFunction({ name: fnName, command: fnCommand[0], args: fnCommand.slice(1) });
    port = String(f.port);
  } else if (port) {
    await cp.registerFunction(fnName, Number(port));
  }
} catch (e) {
  await cp.stop();
  throw e;
}

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
