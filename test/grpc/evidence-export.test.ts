// The evidence export over loopback when something goes wrong, as the two containers run in a
// cluster: a real `evidence collect` process serving a checkout made here, and a real `evidence
// export` process given the recorded outcome and the collector's address as Berth gives them. A
// registry that refuses everything (the termination message says why, the credential appears
// nowhere, the export gives up at its deadline), a collector that is gone, and a runtime that
// removed the checkout's .git. Pushing to a real registry is test/registry/evidence-registry.test.ts.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectedEvidenceSchema } from "../../functions/evidence/collected.js";
import { evidence, evidenceLoopback, PASSWORD, until } from "../support/evidence-loopback.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";

const tempDir = tempDirs();

describe("evidence collect and evidence export over loopback, when the push cannot happen", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const { workload, runtimeWorks, reported, exportEnv } = evidenceLoopback(tempDir, cleanups);

  it("against a registry that refuses everything: Failed/Refused after each attempt, exit 1 at the deadline", async () => {
    const pki = makeTestPKI(tempDir);
    const base64 = Buffer.from(`robot:${PASSWORD}`).toString("base64");
    const seen: string[] = [];
    // It lacks every blob, refuses every upload, and even echoes the Authorization header back in
    // its error, which the export must not repeat.
    const refusing = https.createServer({ key: readFileSync(join(pki.dir, "server.key")), cert: readFileSync(join(pki.dir, "server.crt")) }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.method === "HEAD") return void res.writeHead(404).end();
      res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ errors: [{ code: "DENIED", message: `not for ${req.headers.authorization ?? "anonymous"}` }] }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => refusing.close(() => resolve())));
    const host = `127.0.0.1:${(refusing.address() as AddressInfo).port}`;

    const w = await workload();
    const auth = JSON.stringify({ auths: { [`https://${host}`]: { username: "robot", password: PASSWORD } } });
    const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: join(pki.dir, "ca.crt"), BERTH_REGISTRY_AUTH: auth, BERTH_EXPORT_DEADLINE_SECONDS: "3" });
    runtimeWorks(w);
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);

    expect(await exporter.exited, exporter.output()).toBe(1);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    const result = reported(terminationLog);
    expect(result).toMatchObject({ state: "Failed", reason: "Refused" });
    expect(result.state === "Failed" && result.attempts).toBeGreaterThanOrEqual(2);
    expect(result.state === "Failed" && result.message).toBe("POST a blob upload: the registry answered 403 DENIED: not for Basic ***");
    for (const text of [exporter.output(), readFileSync(terminationLog, "utf8")]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(base64);
    }
    // Never told it is done: the collector keeps serving until the pod's grace period ends.
    expect(w.collector.child.exitCode).toBeNull();
  });

  it("without a collector to answer: Failed/NoEvidence, exit 1 at the deadline", async () => {
    const w = await workload();
    // The collector is gone (killed at the end of the grace period, say).
    await w.collector.stop();
    const { env, terminationLog } = exportEnv(w, "127.0.0.1:1/berth/evidence", { BERTH_EXPORT_DEADLINE_SECONDS: "3" });
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    expect(await exporter.exited, exporter.output()).toBe(1);
    expect(reported(terminationLog)).toMatchObject({ state: "Failed", reason: "NoEvidence", message: expect.stringContaining("ECONNREFUSED") });
  });

  it("when the runtime removed the checkout's .git, still serves the patch, made against the copy taken before it ran", async () => {
    const w = await workload();
    execFileSync("rm", ["-rf", join(w.src, ".git")]);
    runtimeWorks(w);
    const res = await until("the evidence", async () => {
      const r = await fetch(`http://127.0.0.1:${w.port}/evidence`);
      return r.status === 503 ? undefined : r;
    });
    expect(res.status).toBe(200);
    const evidence = collectedEvidenceSchema.parse(await res.json());
    expect(evidence).toMatchObject({ commit: w.commit, notCollected: null, leftOut: [] });
    expect(Buffer.from(evidence.patch!, "base64").toString()).toContain("-console.log('hello');\n+console.log('hello, world');\n");
  });

});
