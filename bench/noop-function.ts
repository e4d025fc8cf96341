#!/usr/bin/env node
// The floor of `npm run bench`: a composition function that does nothing, on the same SDK,
// the same Node and the same serve() as function-berth (functions/berth/main.ts). It answers
// every request with to(req): the request's own desired state, unchanged.
//
// BERTH_NOOP_ECHO=1 makes it a second, heavier floor: it also hands the observed composed
// resources back as desired, so its response is as large as a full render, and the difference
// between the two floors is what encoding a response of that size costs.
import { type Resource, serve, to } from "@crossplane-org/function-sdk-typescript";

const echo = process.env.BERTH_NOOP_ECHO === "1";

serve(
  {
    RunFunction: async (req) => {
      const rsp = to(req);
      if (echo && rsp.desired) {
        const resources: Record<string, Resource> = {};
        for (const [name, r] of Object.entries(req.observed?.resources ?? {})) resources[name] = { resource: r.resource, connectionDetails: {}, ready: 1 };
        rsp.desired.resources = resources;
      }
      return rsp;
    },
  },
  { name: echo ? "function-noop-echo" : "function-noop" },
);
