// The in-process half of `npm run bench`, compiled to dist/bench/inprocess.js and run on plain
// node (as the function itself runs, not through tsx). It prints one JSON object on stdout:
//   breakdown    one steady-state call split into decode, runFunction and encode, with the
//                floor's own work (to(req) and its encoding) beside it;
//   experiments  what parts of the render cost (zod parses, kubernetes-models classes) and what
//                the SDK's Struct codec costs against a direct one (bench/struct-codec.ts);
//   scaling      the capabilities and observed-resources series.
//   node dist/bench/inprocess.js [--quick] [--no-scaling]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { RunFunctionRequest, RunFunctionResponse, to } from "@crossplane-org/function-sdk-typescript";
import type { KubeObject } from "../functions/berth/model.js";
import { type Case, interleaved, scalingSeries } from "./scaling.js";
import { decodeStruct, encodeStruct } from "./struct-codec.js";
import { fullWorkspace, steadyState } from "./workload.js";

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, "no-scaling": { type: "boolean", default: false } } });
const quick = values.quick!;
const timing = quick ? { passes: 5, batchMs: 15, warmupMs: 150 } : { passes: 21, batchMs: 25, warmupMs: 400 };

const load = async <T>(path: string): Promise<T | undefined> => {
  try {
    return (await import(pathToFileURL(resolve(path)).href)) as T;
  } catch {
    return undefined;
  }
};

type Run = (req: RunFunctionRequest) => RunFunctionResponse;
const berth = await load<{ runFunction: Run }>("dist/functions/berth/function.js");
if (!berth) throw new Error("dist/functions/berth/function.js is missing: run npm run build");
const run = berth.runFunction;
const codec = { decode: (b: Uint8Array) => RunFunctionRequest.decode(b), encode: (r: RunFunctionResponse) => RunFunctionResponse.encode(r).finish() };

const s = await steadyState(run, "DeveloperWorkspace", fullWorkspace());
const rsp = run(s.req);
const rspBytes = codec.encode(rsp);

// ---- where one call goes ----
const breakdownCases: Case[] = [
  { name: "decode", fn: () => codec.decode(s.bytes) },
  { name: "render", fn: () => run(s.req) },
  { name: "encode", fn: () => codec.encode(rsp) },
  { name: "floor", fn: () => codec.encode(to(codec.decode(s.bytes))) },
];

// ---- experiments: parts of the render, and the Struct codec ----
type Parser = { safeParse(x: unknown): { success: boolean } };
const docs = await load<{ developerWorkspaceSchema?: Parser; workspaceProfileSchema?: Parser }>("dist/functions/berth/schema/documents.js");
const xr = s.req.observed!.composite!.resource as KubeObject;
const profile = s.req.requiredResources?.profile?.items[0]?.resource as KubeObject | undefined;
const experimentCases: Case[] = [];
if (docs?.developerWorkspaceSchema) experimentCases.push({ name: "zod: parse the DeveloperWorkspace", fn: () => docs.developerWorkspaceSchema!.safeParse(xr) });
if (docs?.workspaceProfileSchema && profile) experimentCases.push({ name: "zod: parse the WorkspaceProfile", fn: () => docs.workspaceProfileSchema!.safeParse(profile) });

// kubernetes-models: what constructing each rendered object through its class and toJSON() costs.
const rendered = Object.values(rsp.desired?.resources ?? {}).map((r) => r.resource as KubeObject);
const models: { cls: new (o: object) => { toJSON(): unknown }; o: KubeObject }[] = [];
for (const o of rendered) {
  const mod = await load<Record<string, new (o: object) => { toJSON(): unknown }>>(`node_modules/kubernetes-models/${o.apiVersion}/${o.kind}.js`);
  const cls = mod?.[o.kind];
  if (cls) models.push({ cls, o });
}
if (models.length > 0) {
  experimentCases.push({ name: `kubernetes-models: new Kind(o).toJSON() x${models.length}`, fn: () => models.map(({ cls, o }) => new cls(o).toJSON()) });
  experimentCases.push({ name: `plain: {...o} x${models.length}`, fn: () => models.map(({ o }) => ({ ...o })) });
}

// The SDK's generated Struct codec against a direct one, on every Struct of the request and the response.
type StructCodec = { decode(b: Uint8Array): unknown; unwrap(m: unknown): Record<string, unknown>; encode(m: unknown): { finish(): Uint8Array }; wrap(o: unknown): unknown };
const sdkStruct = (await load<{ Struct: StructCodec }>("node_modules/@crossplane-org/function-sdk-typescript/dist/proto/google/protobuf/struct.js"))?.Struct;
let structCheck: { identical_encodings: number; structs: number; decodes_equal: boolean; request_struct_bytes: number; response_struct_bytes: number } | undefined;
if (sdkStruct) {
  const requestObjects = [
    xr,
    ...Object.values(s.req.observed?.resources ?? {}).map((r) => r.resource!),
    ...Object.values(s.req.requiredResources ?? {}).flatMap((l) => l.items.map((r) => r.resource!)),
    ...(s.req.input ? [s.req.input] : []),
  ];
  const responseObjects = [rsp.desired!.composite!.resource!, ...rendered];
  const requestBytes = requestObjects.map((o) => sdkStruct.encode(sdkStruct.wrap(o)).finish());
  let identical = 0;
  for (const o of [...requestObjects, ...responseObjects]) if (Buffer.compare(Buffer.from(sdkStruct.encode(sdkStruct.wrap(o)).finish()), encodeStruct(o)) === 0) identical++;
  structCheck = {
    identical_encodings: identical,
    structs: requestObjects.length + responseObjects.length,
    decodes_equal: requestBytes.every((b) => isDeepStrictEqual(decodeStruct(b), sdkStruct.unwrap(sdkStruct.decode(b)))),
    request_struct_bytes: requestBytes.reduce((a, b) => a + b.length, 0),
    response_struct_bytes: responseObjects.reduce((a, o) => a + encodeStruct(o).length, 0),
  };
  experimentCases.push(
    { name: "Struct decode, request: SDK", fn: () => requestBytes.map((b) => sdkStruct.unwrap(sdkStruct.decode(b))) },
    { name: "Struct decode, request: direct", fn: () => requestBytes.map((b) => decodeStruct(b)) },
    { name: "Struct encode, response: SDK", fn: () => responseObjects.map((o) => sdkStruct.encode(sdkStruct.wrap(o)).finish()) },
    { name: "Struct encode, response: direct", fn: () => responseObjects.map((o) => encodeStruct(o)) },
  );
}

const breakdown = interleaved(breakdownCases, timing);
const experiments = interleaved(experimentCases, timing);
const scaling = values["no-scaling"] ? [] : await scalingSeries(run, codec, quick);

process.stdout.write(
  `${JSON.stringify({
    request_bytes: s.bytes.length,
    response_bytes: rspBytes.length,
    breakdown_us: breakdown,
    experiments_us: experiments,
    struct_codec_check: structCheck ?? null,
    scaling,
  })}\n`,
);
