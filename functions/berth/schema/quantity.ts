import { z } from "zod";

// The subset of Kubernetes resource.Quantity that a workspace document may use: a plain
// decimal with an optional binary or decimal suffix. Exponents ("1e3") are legal upstream but
// make documents harder to review, so Berth refuses them.
export const QUANTITY = /^(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity in base units (cores, bytes). Only for comparisons. */
export function quantityValue(quantity: string): number {
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(quantity);
  if (!match) throw new Error(`not a quantity: ${quantity}`);
  return Number(match[1]) * (SUFFIX[match[2] ?? ""] ?? Number.NaN);
}

/**
 * The sum of CPU quantities, in millicores ("2100m"), or of memory quantities, in whole
 * bytes unless it is a whole number of mebibytes ("1152Mi"): exact for anything a document
 * can declare (millicores, whole bytes), where adding values in cores or bytes as floats is not.
 */
export function sumCpu(...quantities: string[]): string {
  return `${quantities.reduce((total, q) => total + Math.round(quantityValue(q) * 1000), 0)}m`;
}
export function sumMemory(...quantities: string[]): string {
  const bytes = quantities.reduce((total, q) => total + Math.round(quantityValue(q)), 0);
  return bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20}Mi` : String(bytes);
}

/** The sum of quantities of one resource, CPU or memory, exact as above. */
export function sumOf(resource: "cpu" | "memory", ...quantities: string[]): string {
  return resource === "cpu" ? sumCpu(...quantities) : sumMemory(...quantities);
}

/**
 * A Kubernetes quantity written as a string ("500m", "8Gi") or a whole number (2), always
 * handed on as a string so rendered objects read the same whichever the author wrote.
 * In the XRD it is `x-kubernetes-int-or-string`, as Kubernetes declares its own quantities.
 */
export const quantity = z
  .union([
    z.string().max(32).regex(QUANTITY, 'must be a quantity such as "500m", "2" or "8Gi"'),
    z.int().nonnegative().max(2 ** 40),
  ])
  .transform((value) => String(value))
  .meta({ "x-kubernetes-int-or-string": true });

/** A quantity that must be greater than zero. */
export const positiveQuantity = quantity.refine((value) => quantityValue(value) > 0, "must be greater than zero");
