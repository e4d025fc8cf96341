// npm run render and npm run generate as an operator runs them: each CLI spawned as its own
// process, its stdout (the YAML, or the help) and stderr (errors and notes) read apart.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";

/** This process's environment without npm's variables (vitest may run under `npm test`). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_")));
}

type Run = { status: number | null; stdout: string; stderr: string };

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { encoding: "utf8", env: cleanEnv() }, (_, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }));
  });
}

const cli = (script: string, args: string[]) => run(process.execPath, ["--import", "tsx", `functions/berth/tooling/${script}`, ...args]);
const render = (...args: string[]) => cli("render-cli.ts", args);

/** A shell command as written in a help text or a README, run as it is. */
const shell = (command: string) => run("sh", ["-c", command]);

/** The `npm run -s render -- ...` commands of a help text, continuation lines joined. */
function commands(help: string): string[] {
  return [...help.replace(/\\\n\s*/g, "").matchAll(/^\s*(npm run -s render -- .*)$/gm)].map((m) => m[1]!.trim());
}

const golden = (name: string) => readFileSync(`test/golden/crossplane-render-${name}.yaml`, "utf8");

describe("npm run render -- --help", { timeout: 60_000 }, () => {
  let help: Run;
  beforeAll(async () => {
    help = await render("--help");
  });

  it("prints the usage on stdout and exits 0: every flag, what it does, and an example of each workspace kind", async () => {
    expect(help.status).toBe(0);
    expect(help.stderr).toBe("");
    for (const flag of ["-e, --required <file>", "-o, --observed <file>", "--converge", "-r, --include-function-results", "-h, --help"]) expect(help.stdout).toContain(flag);
    const examples = commands(help.stdout);
    expect(examples.some((c) => c.includes("examples/developerworkspace-"))).toBe(true);
    expect(examples.some((c) => c.includes("examples/executionworkspace-"))).toBe(true);
    expect(await render("-h")).toEqual(help);
  });

  it("its examples print, byte for byte, the converged goldens crossplane render printed, and a note on stderr", async () => {
    const expected: Record<string, string> = { "developerworkspace-persistent": "persistent-converged", "executionworkspace-sandbox": "execution-sandbox-converged" };
    const examples = commands(help.stdout);
    expect(examples).toHaveLength(2);
    for (const command of examples) {
      const document = /examples\/([\w-]+)\.yaml/.exec(command)![1]!;
      const r = await shell(command);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(golden(expected[document]!));
      // The YAML alone on stdout; the note that the status is a cluster's without controllers on stderr, one line.
      expect(r.stderr).toBe("render: no cluster, so no object is Ready: the status (phase Provisioning) is what a cluster shows until they are\n");
    }
  });
});

describe("npm run render's errors and notes", { timeout: 60_000 }, () => {
  it("an unknown flag fails, naming it and pointing to --help", async () => {
    const r = await render("examples/developerworkspace-persistent.yaml", "--bogus");
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("render: unknown flag --bogus (npm run render -- --help lists the flags)\n");
  });

  it("a flag with no file fails, naming it", async () => {
    expect((await render("examples/developerworkspace-persistent.yaml", "--required")).stderr).toMatch(/^render: --required needs a file/);
    expect((await render("examples/developerworkspace-persistent.yaml", "-e", "--converge")).stderr).toMatch(/^render: --required needs a file/);
  });

  it("keeps every flag: -e/--required, --required=<file>, -o/--observed, -r, --converge", async () => {
    const profile = await render("examples/profile.yaml", "-e", "examples/cluster/storageclass.yaml");
    expect(profile.stdout).toBe(golden("profile"));
    expect((await render("examples/profile.yaml", "--required=examples/cluster/storageclass.yaml")).stdout).toBe(golden("profile"));
    expect((await render("examples/developerworkspace-persistent.yaml", "-r")).stdout).toMatch(/\nkind: Result\nmessage: 'Pipeline step "render": DeveloperWorkspace "alice-payments-xr": WorkspaceProfile\n/);
    expect((await render("examples/developerworkspace-persistent.yaml", "--converge", "-o", "x.yaml")).stderr).toMatch(/--converge and --observed do not go together/);
    const observed = await render("examples/developerworkspace-persistent.yaml", "-o", "examples/profile.yaml");
    expect(observed.status).toBe(1);
    expect(observed.stderr).toMatch(/has no crossplane.io\/composition-resource-name annotation/);
  });

  it("a render missing a required object names the --required files among the examples that answer it, and they render the golden", async () => {
    const r = await render("examples/executionworkspace-sandbox.yaml");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^---\napiVersion: workspaces.berth.dev\/v1alpha1\nkind: ExecutionWorkspace\n/);
    const hint = /^render: no --required file holds ExecutionWorkspaceClass "sandbox-session", which this render requires; .*?: ((?:--required \S+ ?)+)\n$/.exec(r.stderr);
    expect(hint, r.stderr).not.toBeNull();
    const flags = hint![1]!.trim().split(" ");
    expect(flags).toContain("examples/class-sandbox.yaml");
    expect((await render("examples/executionworkspace-sandbox.yaml", ...flags)).stdout).toBe(golden("execution-sandbox"));
  });

  it("names the object a render lacks when no example holds it", async () => {
    const r = await render("examples/developerworkspace-persistent.yaml", "--required", "examples/cluster/services.yaml");
    expect(r.stderr).toMatch(/^render: no --required file holds WorkspaceProfile "standard", .*: --required examples\/profile.yaml/);
  });

  it("says nothing on stderr for a Ready render", async () => {
    expect((await render("examples/profile.yaml", "--required", "examples/cluster/storageclass.yaml")).stderr).toBe("");
  });

  it("run as `npm run render` without -s, says on stderr that npm's banner went to stdout", async () => {
    const r = await shell("npm run render -- examples/profile.yaml --required examples/cluster/storageclass.yaml");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\n> berth@[^ ]+ render\n/);
    expect(r.stdout.endsWith(golden("profile"))).toBe(true);
    expect(r.stderr).toContain("npm run -s render");
    expect((await shell("npm run -s render -- examples/profile.yaml --required examples/cluster/storageclass.yaml")).stdout).toBe(golden("profile"));
  });
});

describe("npm run generate's flags", { timeout: 60_000 }, () => {
  it("--help prints the usage, exits 0 and writes nothing; an unknown flag or an argument fails", async () => {
    const help = await cli("generate-cli.ts", ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("-h, --help");
    expect(help.stdout).not.toContain("wrote");
    const unknown = await cli("generate-cli.ts", ["--bogus"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe("generate: unknown flag --bogus (npm run generate -- --help)\n");
    expect((await cli("generate-cli.ts", ["apis"])).status).toBe(1);
  });
});
