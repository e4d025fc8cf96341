import type { KubeObject } from "../model.js";

/**
 * A Kubernetes object, typed by its kubernetes-models interface, as the plain JSON Berth hands
 * to Crossplane. Only the types are used: building the library's classes at run time cost
 * about 90 µs per render and up to half a second of start-up (see bench/README.md).
 */
export function kube<T extends { apiVersion: string; kind: string }>(object: T): KubeObject {
  return object as unknown as KubeObject;
}
