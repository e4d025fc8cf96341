// What a reference runtime's entrypoint reads: the runtime contract's variables
// (functions/contracts/runtime-env.ts), parsed once into one typed value, so that each agent's
// configuration (opencode/config.ts, codex/config.ts) is a plain function of it.
import { z } from "zod";
import { RUNTIME_ENV, RUNTIME_PATHS } from "../contracts/runtime-env.js";

export interface McpServer {
  name: string;
  tools: string[];
  /** The workspace's MCP gate for this server; without it the server is not reachable through a gate. */
  url?: string;
}

export interface RuntimeInputs {
  workspaceID: string;
  workspaceDir: string;
  checkoutDir: string;
  home: string;
  tmp: string;
  model?: string;
  task?: string;
  inference?: { url: string; api: "openai"; apiKey?: string };
  mcpServers: McpServer[];
  verificationCommand?: string[];
  verificationResult?: string;
}

const json = <T extends z.ZodType>(schema: T) =>
  z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "is not JSON" });
      return z.NEVER;
    }
  }).pipe(schema);

const envSchema = z.object({
  [RUNTIME_ENV.workspaceID]: z.string().min(1),
  [RUNTIME_ENV.workspaceDir]: z.string().startsWith("/").default(RUNTIME_PATHS.workspace),
  HOME: z.string().startsWith("/").default(RUNTIME_PATHS.home),
  [RUNTIME_ENV.model]: z.string().min(1).optional(),
  [RUNTIME_ENV.task]: z.string().min(1).optional(),
  [RUNTIME_ENV.inferenceUrl]: z.url({ protocol: /^https?$/ }).optional(),
  [RUNTIME_ENV.inferenceApi]: z.enum(["openai"]).optional(),
  [RUNTIME_ENV.inferenceCredential]: z.string().regex(/^BERTH_INFERENCE_[A-Z0-9_]+$/, "must name a BERTH_INFERENCE_ variable").optional(),
  [RUNTIME_ENV.mcpServers]: json(z.array(z.object({ name: z.string().min(1), tools: z.array(z.string().min(1)), url: z.url().optional() }))).optional(),
  [RUNTIME_ENV.verificationCommand]: json(z.array(z.string()).min(1)).optional(),
  [RUNTIME_ENV.verificationResult]: z.string().startsWith("/").optional(),
});

/** The contract's variables as one value; an error names the variable that is wrong. */
export function runtimeInputs(env: Record<string, string | undefined>): RuntimeInputs {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data as Record<string, unknown>;
  const get = <T>(name: string) => e[name] as T | undefined;
  const url = get<string>(RUNTIME_ENV.inferenceUrl);
  const credential = get<string>(RUNTIME_ENV.inferenceCredential);
  const apiKey = credential === undefined ? undefined : env[credential];
  if (credential !== undefined && apiKey === undefined) throw new Error(`${RUNTIME_ENV.inferenceCredential}: names ${credential}, which is not set`);
  const optional = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));
  return {
    workspaceID: get<string>(RUNTIME_ENV.workspaceID)!,
    workspaceDir: get<string>(RUNTIME_ENV.workspaceDir)!,
    checkoutDir: RUNTIME_PATHS.checkout,
    home: get<string>("HOME")!,
    tmp: RUNTIME_PATHS.tmp,
    ...optional("model", get<string>(RUNTIME_ENV.model)),
    ...optional("task", get<string>(RUNTIME_ENV.task)),
    ...optional("inference", url === undefined ? undefined : { url, api: get<"openai">(RUNTIME_ENV.inferenceApi) ?? "openai", ...optional("apiKey", apiKey) }),
    mcpServers: get<McpServer[]>(RUNTIME_ENV.mcpServers) ?? [],
    ...optional("verificationCommand", get<string[]>(RUNTIME_ENV.verificationCommand)),
    ...optional("verificationResult", get<string>(RUNTIME_ENV.verificationResult)),
  };
}
