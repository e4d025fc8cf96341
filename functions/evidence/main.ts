// Berth's evidence program, one image for both sides of the export:
//
//   evidence collect   the collector, a native sidecar beside the runtime (collect.ts)
//   evidence export    the export, the only container of the Job evidence-export (export.ts)
//
// Both are configured by environment variables only (the pod spec Berth renders sets them) and
// log one JSON object per line on stderr. A setting that does not parse exits 2 naming it.
import { pino } from "pino";
import { collectorSettings, startCollector } from "./collect.js";
import { exportSettings, runExport } from "./export.js";
import { writeTerminationMessage } from "./termination-message.js";

const USAGE = "usage: evidence collect | evidence export";

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function settingsOf<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    fail(2, err instanceof Error ? err.message : String(err));
  }
}

const logger = (component: string) => pino({ base: { component } }, pino.destination({ fd: 2, sync: true }));

async function collect(): Promise<void> {
  const settings = settingsOf(() => collectorSettings(process.env));
  const log = logger("evidence-collect");
  let collector;
  try {
    collector = await startCollector(settings, log);
  } catch (err) {
    fail(1, `cannot listen on port ${settings.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
  // The kubelet's SIGTERM to a native sidecar means every main container has exited. A second
  // one changes nothing: the collector serves until the export is done or the grace period ends.
  process.on("SIGTERM", () => collector.runtimeEnded());
  // A checkout that cannot be copied keeps the runtime from starting: the collector exits, its
  // reason in the termination message (kubectl describe pod shows it), and the kubelet's
  // restarts meet the same checkout and the same reason.
  collector.ready.catch((err: unknown) => {
    const reason = err instanceof Error ? err.message : String(err);
    writeTerminationMessage("/dev/termination-log", reason);
    fail(1, reason);
  });
  process.once("SIGINT", () => void collector.close().then(() => process.exit(0)));
  await collector.done;
  log.info("the export is done");
  await collector.close();
  process.exit(0);
}

async function exportEvidence(): Promise<void> {
  const settings = settingsOf(() => exportSettings(process.env));
  const log = logger("evidence-export");
  if (process.env.BERTH_REGISTRY_AUTH && !settings.credential) log.warn({ host: settings.repository.host }, "BERTH_REGISTRY_AUTH has no entry for the registry: pushing without a credential");
  process.exit(await runExport(settings, { log }));
}

const command = process.argv[2];
if (process.argv.length !== 3) fail(2, USAGE);
if (command === "collect") await collect();
else if (command === "export") await exportEvidence();
else fail(2, `unknown command "${command}"\n${USAGE}`);
