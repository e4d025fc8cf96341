import { credentialVariable, RUNTIME_ENV } from "../../contracts/runtime-env.js";
import type { NamespaceProfile } from "../workspace.js";

/**
 * Where the runtime finds its model: the URL and API of the inference destination's model
 * service, and which of its variables holds the inference credential. Without these a runtime
 * would have egress to the model service and no way to know where it is.
 */
export function inferenceEnv(p: NamespaceProfile, credentials: readonly { name: string; purpose: string }[] = []): { name: string; value: string }[] {
  const endpoint = p.egress.find((e) => e.name === "inference")?.inference;
  const credential = credentials.find((c) => c.purpose === "inference");
  return [
    ...(endpoint
      ? [
          { name: RUNTIME_ENV.inferenceUrl, value: endpoint.url },
          { name: RUNTIME_ENV.inferenceApi, value: endpoint.api },
        ]
      : []),
    ...(credential ? [{ name: RUNTIME_ENV.inferenceCredential, value: credentialVariable(credential.purpose, credential.name) }] : []),
  ];
}
