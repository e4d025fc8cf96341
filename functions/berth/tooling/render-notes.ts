// What `npm run render` says on stderr beside the YAML it prints on stdout: which --required
// files a render lacks (found among the examples), and that a local render's status is what a
// cluster shows before the objects' controllers have made them Ready.
import { Ready, type RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import type { KubeObject } from "../model.js";
import { type LocalRender, matches, type Selector } from "./local-render.js";

/** The required resources the function asked for and the files answered with nothing. */
export function unansweredRequirements(render: LocalRender): Selector[] {
  const wanted = render.response.requirements?.resources ?? {};
  return Object.entries(wanted)
    .filter(([key, selector]) => selector !== undefined && (render.request.requiredResources[key]?.items.length ?? 0) === 0)
    .map(([, selector]) => selector as Selector);
}

export function describeSelector(s: Selector): string {
  const labels = s.matchLabels?.labels;
  const what = labels !== undefined ? `labelled ${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",")}` : `"${s.matchName}"`;
  return `${s.kind} ${what}${s.namespace ? ` in ${s.namespace}` : ""}`;
}

export interface CandidateFile {
  path: string;
  objects: KubeObject[];
}

/**
 * The files among `candidates` (the examples) that answer what a render requires and the files
 * did not: added one round at a time, since a requirement answered can bring the next (a class
 * names its profile, a profile its StorageClass). `missing` is what the first render lacked.
 */
export async function suggestRequired(
  render: (cluster: KubeObject[]) => Promise<LocalRender>,
  given: readonly KubeObject[],
  candidates: readonly CandidateFile[],
): Promise<{ missing: Selector[]; files: string[] }> {
  const files: string[] = [];
  let cluster = [...given];
  let missing: Selector[] | undefined;
  for (let round = 0; round < 5; round++) {
    const lacking = unansweredRequirements(await render(cluster));
    const answering = candidates.filter((c) => !files.includes(c.path) && c.objects.some((o) => lacking.some((s) => matches(o, s))));
    missing ??= lacking.filter((s) => answering.some((c) => c.objects.some((o) => matches(o, s))));
    if (answering.length === 0) break;
    files.push(...answering.map((c) => c.path));
    cluster = [...cluster, ...answering.flatMap((c) => c.objects)];
  }
  return { missing: missing ?? [], files };
}

type Status = { phase?: string; reason?: string; message?: string };

function compositeStatus(response: RunFunctionResponse): Status {
  return ((response.desired?.composite?.resource as { status?: Status } | undefined)?.status ?? {}) as Status;
}

/** The one line for a render whose required objects were not all given and no example holds them. */
export function notFoundNote(response: RunFunctionResponse): string | undefined {
  const status = compositeStatus(response);
  if (!status.reason?.endsWith("NotFound")) return undefined;
  return `${status.message ?? status.reason}: give the file that holds it with --required <file> (npm run render -- --help)`;
}

/** Whether Crossplane would call the XR Ready: the function says so, or every composed object is. */
function compositeReady(response: RunFunctionResponse): boolean {
  const ready = response.desired?.composite?.ready ?? Ready.READY_UNSPECIFIED;
  if (ready !== Ready.READY_UNSPECIFIED) return ready === Ready.READY_TRUE;
  return Object.values(response.desired?.resources ?? {}).every((r) => r.ready === Ready.READY_TRUE);
}

/**
 * The one line for a render that is not Ready: rendered with no cluster, nothing has made the
 * composed objects Ready, so the status is what a cluster shows until something has.
 */
export function localStatusNote(response: RunFunctionResponse): string | undefined {
  if (compositeReady(response)) return undefined;
  const phase = compositeStatus(response).phase;
  return `rendered with no cluster, so no controller has made the objects Ready and the status is what a cluster shows before they are${phase ? ` (phase ${phase} until they are Ready on a cluster)` : ""}`;
}
