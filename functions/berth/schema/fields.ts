import { z } from "zod";

// Field types shared by every Berth document. Each one carries the bound that keeps a hostile
// value out of the objects Berth renders: names become Kubernetes names and label values, so
// they are DNS labels short enough to survive the prefixes and suffixes Berth adds.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A DNS-1123 label of at most `max` characters (Kubernetes allows 63). */
export const dnsLabel = (max = 63) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(DNS_LABEL, "must be lower-case letters, digits and '-', starting and ending with a letter or digit");

/** A DNS-1123 subdomain (Kubernetes allows 253): most objects' names, a ConfigMap's among them. */
export const dnsSubdomain = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, "must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit");

/**
 * A workspace ID: it names the XR (`<id>-xr`), the Namespace (`ws-<id>`) and every label that
 * ties the rendered objects together, so it must fit in a label value with room to spare.
 */
export const workspaceID = dnsLabel(40);

/** A reference to another cluster-scoped object by name. */
export const objectRef = z.strictObject({ name: dnsLabel(63) });

/** Free text that ends up in annotations or environment variables: one line, bounded. */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    // \x escapes rather than \u: the pattern is also compiled by Go's RE2 in the API server.
    .regex(/^[^\x00-\x1f\x7f]*$/, "must be a single line without control characters");

/** A container image, pinned by tag or digest. */
export const image = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[a-z0-9]+([._\-/:][a-z0-9]+)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/, "must be an image reference such as registry.example/agent:1.2.3 or …@sha256:<digest>");

/** A string zod checks with `schema` and the API server with the CEL `rule`, each saying `message`. */
const checkedBoth = (max: number, schema: z.ZodType, rule: string, message: string) =>
  z
    .string()
    .max(max)
    .refine((value) => schema.safeParse(value).success, message)
    .meta({ "x-kubernetes-validations": [{ rule, message }] });

/** A CIDR block (IPv4 or IPv6); the API server checks it with CEL's isCIDR. */
export const cidr = checkedBoth(49, z.union([z.cidrv4(), z.cidrv6()]), "isCIDR(self)", "must be a CIDR block such as 10.0.0.0/24");

/** An IP address (IPv4 or IPv6); the API server checks it with CEL's isIP. */
export const ip = checkedBoth(45, z.union([z.ipv4(), z.ipv6()]), "isIP(self)", "must be an IP address such as 10.96.0.53");

/** A TCP or UDP port. */
export const port = z.int().min(1).max(65535);

export const protocol = z.enum(["TCP", "UDP", "SCTP"]);

/** An image pinned by digest, as Agent Substrate requires: changing an image invalidates snapshots. */
export const pinnedImage = image.refine((ref) => ref.includes("@sha256:"), "must be pinned by digest (…@sha256:<digest>): changing the image invalidates snapshots");
