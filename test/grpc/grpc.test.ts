// The same whole-request cases as test/unit/function.test.ts, sent over real gRPC to the
// function running as its own process: once with TLS from a test CA and Crossplane's kind of
// client certificate, running the bundle the image ships (npm run bundle, which npm test runs
// first), once with --insecure. What reaches the wire must equal the in-process
// answer, field for field.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTION_CASES } from "../execution-cases.js";
import { CASES, expected } from "../cases.js";
import { fleetOperationRequest, lifecycleCases } from "../lifecycle-cases.js";
import { RunFunctionRequest } from "@crossplane-org/function-sdk-typescript";
import { CONNECTION_WINDOW_BYTES, MAX_REQUEST_ENV, STREAM_WINDOW_BYTES } from "../../functions/berth/serve.js";
import { rfc3339 } from "../../functions/berth/lifecycle/signals.js";
import { ttlsFromEnvironment } from "../../functions/berth/respond/ttl.js";
import { connect, type FunctionProcess, type RunFunctionClient, startFunction } from "../support/function-process.js";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../../image/shipped.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";
import { offeredWindows } from "../support/http2-windows.js";

const tempDir = tempDirs();

// Protobuf drops empty maps and unset fields on the wire; compare what both sides mean.
const wire = (o: unknown) => JSON.parse(JSON.stringify(o));

// TLS runs the bundle the image ships, with the image's Node flags; --insecure runs the source.
describe.each([
  ["TLS, the shipped bundle", false, { entry: SHIPPED_ENTRY, nodeFlags: shippedNodeFlags() }],
  ["--insecure, the source through tsx", true, {}],
] as const)("RunFunction over gRPC (%s)", (_, insecure, process) => {
  let fn: FunctionProcess;
  let client: RunFunctionClient;

  beforeAll(async () => {
    // The bundle is built here so the test never runs a stale one (npm test builds it too).
    if ("entry" in process) execFileSync("npm", ["run", "-s", "bundle"], { stdio: "inherit" });
    const pki = insecure ? undefined : makeTestPKI(tempDir);
    fn = await startFunction(insecure ? { ...process, insecure: true } : { ...process, tlsDir: pki!.serverDir });
    client = connect(fn.address, pki?.clientDir);
  });

  afterAll(async () => {
    client?.close();
    await fn?.stop();
  });

  it.each([...CASES, ...EXECUTION_CASES])("$name", async (c) => {
    expect(wire(await client.runFunction(c.req))).toEqual(expected(c));
  });

  // Built at call time: the server reads its own clock, so `at` is taken from its answer and
  // must lie between the request and the reply.
  it.each(lifecycleCases(new Date()).map((c, i) => ({ name: c.name, i })))("lifecycle: $name", async ({ i }) => {
    const before = new Date();
    const got = wire(await client.runFunction(lifecycleCases(before)[i]!.req));
    const at: string = got.output?.acted?.[0]?.at ?? rfc3339(before);
    expect(Date.parse(at)).toBeGreaterThanOrEqual(Date.parse(rfc3339(before)));
    expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
    expect(got).toEqual(wire(lifecycleCases(before, at)[i]!.want));
  });
});

describe("TLS is not optional", () => {
  it("a client without TLS cannot talk to a TLS function", async () => {
    const pki = makeTestPKI(tempDir);
    const fn = await startFunction({ tlsDir: pki.serverDir });
    const plain = connect(fn.address);
    try {
      await expect(plain.runFunction(CASES[0]!.req)).rejects.toThrow();
    } finally {
      plain.close();
      await fn.stop();
    }
  });
});

describe("the response TTLs are the operator's to set (BERTH_TTL_PROVISIONING, BERTH_TTL_AT_REST, BERTH_TTL_WATCH_CIRCUIT_OPEN)", () => {
  const byName = (name: string) => [...CASES, ...EXECUTION_CASES].find((c) => c.name === name)!;

  it("the shipped bundle answers a moving workspace, a settled document and one Crossplane's watch circuit breaker holds with the TTLs from its environment", async () => {
    const pki = makeTestPKI(tempDir);
    const fn = await startFunction({ entry: SHIPPED_ENTRY, nodeFlags: shippedNodeFlags(), tlsDir: pki.serverDir, env: { ...process.env, BERTH_TTL_PROVISIONING: "5s", BERTH_TTL_AT_REST: "2h", BERTH_TTL_WATCH_CIRCUIT_OPEN: "3s" } });
    const client = connect(fn.address, pki.clientDir);
    // A settled document whose XR Crossplane marks as held by its breaker at the start of the reconcile.
    const held = structuredClone(byName("WorkspaceProfileValidated").req);
    (held.observed!.composite!.resource as { status?: unknown }).status = { conditions: [{ type: "Responsive", status: "False", reason: "WatchCircuitOpen", message: "Too many watch events" }] };
    try {
      expect((await client.runFunction(byName("WaitingForProfile").req)).meta?.ttl).toEqual({ seconds: 5, nanos: 0 });
      expect((await client.runFunction(byName("WorkspaceProfileValidated").req)).meta?.ttl).toEqual({ seconds: 7200, nanos: 0 });
      expect((await client.runFunction(held)).meta?.ttl).toEqual({ seconds: 3, nanos: 0 });
    } finally {
      client.close();
      await fn.stop();
    }
  });

  it("a bad value stops the process at start-up with the variable named", async () => {
    const expectedMessage = (() => {
      try {
        ttlsFromEnvironment({ BERTH_TTL_AT_REST: "soon" });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(expectedMessage).toContain("BERTH_TTL_AT_REST");
    await expect(startFunction({ entry: SHIPPED_ENTRY, insecure: true, env: { ...process.env, BERTH_TTL_AT_REST: "soon" } })).rejects.toThrow(
      `function exited with 2:\nfunction-berth: ${expectedMessage}`,
    );
  });
});

describe("a slow link to Crossplane", () => {
  // Crossplane sends every call over one connection; at HTTP/2's default 64 KiB a 1 s round trip
  // carries 40 KB/s, and a burst of calls then misses Crossplane's 2-minute deadline together
  // (test/faults measures it through a slow link with real Crossplane).
  it.each([
    ["TLS, the shipped bundle", false],
    ["--insecure", true],
  ] as const)("is offered 16 MiB of flow-control window a connection and 4 MiB a call from the first byte (%s)", async (_, insecure) => {
    const pki = insecure ? undefined : makeTestPKI(tempDir);
    const fn = await startFunction(insecure ? { entry: SHIPPED_ENTRY, insecure: true } : { entry: SHIPPED_ENTRY, tlsDir: pki!.serverDir });
    try {
      expect(await offeredWindows(fn.address, pki?.clientDir)).toEqual({ call: STREAM_WINDOW_BYTES, connection: CONNECTION_WINDOW_BYTES });
    } finally {
      await fn.stop();
    }
    expect([STREAM_WINDOW_BYTES, CONNECTION_WINDOW_BYTES]).toEqual([4 * 2 ** 20, 16 * 2 ** 20]);
  });
});

describe("the function's hygiene on the wire", () => {
  const persistent = () => structuredClone([...CASES].find((c) => c.name === "PersistentWorkspace")!.req);

  const padded = (bytes: number) => {
    const req = persistent();
    req.observed!.resources = { ...req.observed!.resources, padding: { resource: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "padding", namespace: "ws-alice-payments" }, data: { pad: "x".repeat(bytes) } }, connectionDetails: {}, ready: 0 } };
    return req;
  };
  const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: { code?: number; details?: string }) => e);

  it("the lifecycle Operation's request for 1,000 ExecutionWorkspaces (8.5 MB, twice gRPC's default 4 MiB bound) is answered: the idle half suspended", async () => {
    const fn = await startFunction({ entry: SHIPPED_ENTRY, nodeFlags: shippedNodeFlags(), insecure: true });
    const client = connect(fn.address);
    const { req, idle } = fleetOperationRequest(new Date(), 1000);
    try {
      expect(RunFunctionRequest.encode(req).finish().length).toBeGreaterThan(8 * 1024 * 1024);
      const rsp = wire(await client.runFunction(req));
      expect(rsp.results.filter((r: { severity: number }) => r.severity !== 3)).toEqual([]); // only normal results: one per suspension
      expect(Object.keys(rsp.desired.resources).sort()).toEqual(idle);
      expect(rsp.output).toMatchObject({ deferred: 0, unlistedRefusals: 0 });
    } finally {
      client.close();
      await fn.stop();
    }
  });

  it("a request above the function's bound (64 MiB, or BERTH_MAX_REQUEST_SIZE) is refused with RESOURCE_EXHAUSTED and both sizes; one just under it is answered", async () => {
    const fn = await startFunction({ insecure: true });
    const client = connect(fn.address);
    try {
      const refused = await refusal(client.runFunction(padded(65 * 1024 * 1024)));
      expect(refused?.code, "the call is refused").toBe(8); // RESOURCE_EXHAUSTED
      expect(refused?.details).toMatch(/^Received message larger than max \(\d+ vs 67108864\)$/);
    } finally {
      client.close();
      await fn.stop();
    }
    const bounded = await startFunction({ insecure: true, env: { ...process.env, BERTH_MAX_REQUEST_SIZE: "4Mi" } });
    const boundedClient = connect(bounded.address);
    try {
      expect((await boundedClient.runFunction(padded(4 * 1024 * 1024 - 64 * 1024))).results?.some((r) => r.severity === 1)).toBe(false);
      const refused = await refusal(boundedClient.runFunction(padded(5 * 1024 * 1024)));
      expect(refused?.code, "the call is refused").toBe(8);
      expect(refused?.details).toMatch(/^Received message larger than max \(\d+ vs 4194304\)$/);
    } finally {
      boundedClient.close();
      await bounded.stop();
    }
  });

  it("a bad BERTH_MAX_REQUEST_SIZE stops the process at start-up with the variable named", async () => {
    await expect(startFunction({ entry: SHIPPED_ENTRY, insecure: true, env: { ...process.env, BERTH_MAX_REQUEST_SIZE: "lots" } })).rejects.toThrow(
      `function exited with 2:\nfunction-berth: ${MAX_REQUEST_ENV}="lots": want a size between 4Mi and 1Gi`,
    );
  });

  it("with --debug, one line per call names the XR, the verdict and the duration, and no line carries a secret", async () => {
    const SECRET = "s3cr3t-v4lue-that-must-not-leak";
    const fn = await startFunction({ insecure: true, debug: true });
    const client = connect(fn.address);
    const req = persistent();
    // What Crossplane can send a function that is secret: composed resources' connection details and credentials.
    req.observed!.resources = Object.fromEntries(Object.entries(req.observed!.resources ?? {}).map(([k, r]) => [k, { ...r, connectionDetails: { password: Buffer.from(SECRET) } }]));
    req.credentials = { database: { credentialData: { data: { password: Buffer.from(SECRET) } } } } as any;
    try {
      await client.runFunction(req);
      await client.runFunction(req);
    } finally {
      client.close();
      await fn.stop();
    }
    const lines = fn.output().split("\n").filter((l) => l.includes('"msg":"rendered"'));
    expect(lines, "one debug line per call").toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ composite: 'DeveloperWorkspace "alice-payments-xr"', verdict: "rendered", durationMs: expect.any(Number) });
    for (const form of [SECRET, Buffer.from(SECRET).toString("base64")]) expect(fn.output()).not.toContain(form);
  });

  it("SIGTERM stops it cleanly: it says so, exits 0, and refuses new calls", async () => {
    const fn = await startFunction({ insecure: true });
    const client = connect(fn.address);
    try {
      await client.runFunction(persistent());
      const exited = new Promise<number | null>((resolve) => fn.process.once("exit", (code) => resolve(code)));
      fn.process.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(fn.output()).toContain("SIGTERM: no new calls; answering the calls in flight, then exiting");
      expect(fn.output()).toContain("stopped: every call answered");
      await expect(client.runFunction(persistent())).rejects.toThrow();
    } finally {
      client.close();
    }
  });
});
