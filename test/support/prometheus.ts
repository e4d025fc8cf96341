// Reading Prometheus text exposition (the API server's and Crossplane's /metrics).

/** The sum of a metric's samples (a counter or a gauge) whose label set matches. */
export function sumSamples(text: string, name: string, labels: (l: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const l = line.slice(name.length, line.lastIndexOf(" "));
    if (labels(l)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** Crossplane's controllers for Berth's workspace XRs, by controller-runtime's controller label (not the profile and class XRs). */
export const workspaceControllers = (l: string) => /controller="[^"]*workspaces\.berth\.dev/.test(l) && !/WorkspaceProfile|profiles|classes/.test(l);
