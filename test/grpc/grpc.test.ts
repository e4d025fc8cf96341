// The same whole-request cases as test/unit/function.test.ts, sent over real gRPC to the
// function running as its own process: once with TLS from a test CA and Crossplane's kind of
// client certificate, once with --insecure. What reaches the wire must equal the in-process
// answer, field for field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTION_CASES } from "../execution-cases.js";
import { CASES, expected } from "../cases.js";
import { connect, type FunctionProcess, type RunFunctionClient, startFunction } from "../support/function-process.js";
import { makeTestPKI } from "../support/tls.js";

// Protobuf drops empty maps and unset fields on the wire; compare what both sides mean.
const wire = (o: unknown) => JSON.parse(JSON.stringify(o));

describe.each([
  ["TLS", false],
  ["--insecure", true],
] as const)("RunFunction over gRPC (%s)", (_, insecure) => {
  let fn: FunctionProcess;
  let client: RunFunctionClient;

  beforeAll(async () => {
    const pki = insecure ? undefined : makeTestPKI();
    fn = await startFunction(insecure ? { insecure: true } : { tlsDir: pki!.serverDir });
    client = connect(fn.address, pki?.clientDir);
  });

  afterAll(async () => {
    client?.close();
    await fn?.stop();
  });

  it.each([...CASES, ...EXECUTION_CASES])("$name", async (c) => {
    expect(wire(await client.runFunction(c.req))).toEqual(expected(c));
  });
});

describe("TLS is not optional", () => {
  it("a client without TLS cannot talk to a TLS function", async () => {
    const pki = makeTestPKI();
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
