// The largest request the function accepts: 64 MiB unless BERTH_MAX_REQUEST_SIZE says otherwise.
// test/grpc sends requests on either side of the bound to the running process.
// And the HTTP/2 windows serve.ts widens through a private method of grpc-js: they must reach a
// client of the real server, and a grpc-js without that method must fail here, not serve quietly
// with 64 KiB windows.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { CONNECTION_WINDOW_BYTES, DEFAULT_MAX_REQUEST_BYTES, MAX_REQUEST_ENV, maxRequestBytesFromEnvironment, STREAM_WINDOW_BYTES } from "../../functions/berth/serve.js";
import { startFunction } from "../support/function-process.js";
import { tempDirs } from "../support/temp.js";
import { offeredWindows } from "../support/http2-windows.js";

const ROOT = resolve(import.meta.dirname, "../..");
const tempDir = tempDirs();

describe("maxRequestBytesFromEnvironment", () => {
  it("is 64 MiB unless set", () => {
    expect(DEFAULT_MAX_REQUEST_BYTES).toBe(67_108_864);
    expect(maxRequestBytesFromEnvironment({})).toBe(DEFAULT_MAX_REQUEST_BYTES);
    expect(maxRequestBytesFromEnvironment({ [MAX_REQUEST_ENV]: "" })).toBe(DEFAULT_MAX_REQUEST_BYTES);
  });

  it.each([
    ["4Mi", 4 * 2 ** 20],
    ["256Mi", 256 * 2 ** 20],
    ["1Gi", 2 ** 30],
    ["8192Ki", 8 * 2 ** 20],
    ["10000000", 10_000_000],
  ])("reads %s", (text, bytes) => {
    expect(maxRequestBytesFromEnvironment({ BERTH_MAX_REQUEST_SIZE: text })).toBe(bytes);
  });

  it.each(["3Mi", "2Gi", "64MB", "64M", "1.5Gi", "lots", "-64Mi"])("refuses %s, naming the variable", (text) => {
    expect(() => maxRequestBytesFromEnvironment({ BERTH_MAX_REQUEST_SIZE: text })).toThrow(`BERTH_MAX_REQUEST_SIZE=${JSON.stringify(text)}: want a size between 4Mi and 1Gi`);
  });
});

/** HTTP/2's own initial window (RFC 9113, 6.5.2 and 6.9.2): what a server that widens nothing offers. */
const HTTP2_DEFAULT_WINDOW = 65_535;
const FALLBACK_LOG = "cannot widen the HTTP/2 flow-control windows";

describe("the HTTP/2 windows serve.ts widens through grpc-js's private createHttp2Server", () => {
  // A private method can go in any release: grpc-js is pinned to the exact version it was read
  // in, package.json and package-lock.json alike, so moving it is a change someone makes on purpose
  // and this file is run against the new one.
  it("rest on @grpc/grpc-js pinned exactly, installed at that version, which still has the method", () => {
    const pinned = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).dependencies["@grpc/grpc-js"] as string;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    expect(lock.packages[""].dependencies["@grpc/grpc-js"]).toBe(pinned);
    const copies = Object.entries(lock.packages as Record<string, { version: string }>).filter(([path]) => path.endsWith("node_modules/@grpc/grpc-js"));
    expect(copies.map(([path, p]) => `${path}@${p.version}`)).toEqual([`node_modules/@grpc/grpc-js@${pinned}`]);
    expect(JSON.parse(readFileSync(join(ROOT, "node_modules/@grpc/grpc-js/package.json"), "utf8")).version).toBe(pinned);
    expect(typeof (grpc.Server.prototype as unknown as { createHttp2Server?: unknown }).createHttp2Server).toBe("function");
  });

  it("reach a client of the real server on loopback: 4 MiB a call and 16 MiB the connection, from the first frames", async () => {
    const fn = await startFunction({ insecure: true });
    try {
      expect(await offeredWindows(fn.address)).toEqual({ call: STREAM_WINDOW_BYTES, connection: CONNECTION_WINDOW_BYTES });
      expect(fn.output()).not.toContain(FALLBACK_LOG);
    } finally {
      await fn.stop();
    }
    expect([STREAM_WINDOW_BYTES, CONNECTION_WINDOW_BYTES]).toEqual([4 * 2 ** 20, 16 * 2 ** 20]);
  });

  // The day a grpc-js release renames the method, simulated here: grpc-js's server.js loaded with
  // the method renamed everywhere in it, before anything loads grpc-js (deleting the method
  // instead would not do: grpc-js calls it itself, and its server would not bind). The windows a
  // client sees are then HTTP/2's default, which fails the test above, and the server says why.
  it("are HTTP/2's default 64 KiB, and the server says so, on a grpc-js whose createHttp2Server is renamed", async () => {
    const serverJs = join(ROOT, "node_modules/@grpc/grpc-js/build/src/server.js");
    expect(readFileSync(serverJs, "utf8")).toMatch(/\bcreateHttp2Server\(/);
    const preload = join(tempDir("berth-renamed-hook-"), "rename-create-http2-server.cjs");
    writeFileSync(
      preload,
      [
        `const Module = require("node:module");`,
        `const { readFileSync } = require("node:fs");`,
        `const { dirname } = require("node:path");`,
        `const file = ${JSON.stringify(serverJs)};`,
        `const m = new Module(file, null);`,
        `m.filename = file;`,
        `m.paths = Module._nodeModulePaths(dirname(file));`,
        `m._compile(readFileSync(file, "utf8").replace(/\\bcreateHttp2Server\\b/g, "createHttp2ServerRenamed"), file);`,
        `m.loaded = true;`,
        `require.cache[file] = m;`,
        "",
      ].join("\n"),
    );
    const fn = await startFunction({ insecure: true, nodeFlags: ["--require", preload] });
    try {
      expect(await offeredWindows(fn.address)).toEqual({ call: HTTP2_DEFAULT_WINDOW, connection: HTTP2_DEFAULT_WINDOW });
      expect(fn.output()).toContain(FALLBACK_LOG);
    } finally {
      await fn.stop();
    }
  });
});

// The SDK's own startServer logs a bind error and returns, and a process with nothing bound then
// exits 0: Crossplane's Deployment runtime (and anyone reading the exit code) would see a function
// that finished, not one that failed. serve.ts binds itself and exits 1.
describe("a function that cannot bind its address", () => {
  it("exits 1 and says why, when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    try {
      const { port } = taken.address() as AddressInfo;
      const run = spawnSync(process.execPath, ["--import", "tsx", "functions/berth/main.ts", "--insecure", "--address", `127.0.0.1:${port}`], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
      expect(run.error).toBeUndefined();
      expect(`${run.stdout}${run.stderr}`).toMatch(/server bind error: .*(EADDRINUSE|in use)/i);
      expect(run.status).toBe(1);
    } finally {
      await new Promise((done) => taken.close(done));
    }
  });
});
