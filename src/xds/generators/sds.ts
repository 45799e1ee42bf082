// SDS: gateway and DestinationRule credentials from Kubernetes Secrets (Istio's pilot/pkg/xds/sds.go).
// `kubernetes://[ns/]name` is the key and certificate chain; `…-cacert` the CA bundle, from the
// Secret `name-cacert`, else from `name` itself. A proxy gets a credential only when it proved its
// identity, and only a router those its Gateways reference in its own namespace (the merged Gateway's
// verified credentials). Istio also serves a proxy whose service account Kubernetes RBAC lets read
// Secrets of its namespace; without RBAC to ask, Sluice serves no other proxy.
import type { Message } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { tls, unpackAny } from "../../api/index.ts";
import { type ConfigObject, kindKey } from "../../config/index.ts";
import type { MeshPush, ProxyNode, PushSnapshot } from "../../model/index.ts";
import { CA_SUFFIX } from "../../model/index.ts";
import type { Generator, XdsResource } from "../generator.ts";
import { SECRET_KIND, type SecretLookup } from "./secrets.ts";

const GATEWAY_KIND = kindKey("networking.istio.io", "Gateway");
const SCHEMES = ["kubernetes://", "kubernetes-gateway://"];

interface SecretResource {
  namespace: string;
  /** The Secret's name, `-cacert` included when asked. */
  name: string;
  caOnly: boolean;
}

/** `kubernetes://name` (in `defaultNamespace`) or `kubernetes://ns/name`; undefined for other names. */
function parseResource(resource: string, defaultNamespace: string): SecretResource | undefined {
  const scheme = SCHEMES.find((s) => resource.startsWith(s));
  if (!scheme) return undefined;
  const parts = resource.slice(scheme.length).split("/");
  if (parts.some((p) => p === "") || parts.length > 2) return undefined;
  const [namespace, name] = parts.length === 2 ? parts : [defaultNamespace, parts[0]];
  return { namespace, name, caOnly: name.endsWith(CA_SUFFIX) };
}

/** The namespace of the proxy's verified SPIFFE identity. */
function identityNamespace(proxy: ProxyNode): string | undefined {
  for (const id of proxy.verifiedIdentities ?? []) {
    const match = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/[^/]+$/.exec(id);
    if (match) return match[1];
  }
  return undefined;
}

/** A Secret's value under the first of `keys` present (data is base64, stringData plain). */
function secretValue(secret: ConfigObject, keys: readonly string[]): Uint8Array | undefined {
  const data = (secret.data ?? {}) as Record<string, string>;
  const stringData = (secret.stringData ?? {}) as Record<string, string>;
  for (const key of keys) {
    if (typeof data[key] === "string") return Buffer.from(data[key], "base64");
    if (typeof stringData[key] === "string") return Buffer.from(stringData[key], "utf8");
  }
  return undefined;
}

const inline = (bytes: Uint8Array) => ({ specifier: { case: "inlineBytes" as const, value: bytes } });

/** The Envoy Secret for `resource` from the Secrets, or undefined when they do not hold it. */
function buildSecret(secrets: SecretLookup, resourceName: string, r: SecretResource): tls.Secret | undefined {
  if (r.caOnly) {
    const secret =
      secrets.secret(r.namespace, r.name) ?? secrets.secret(r.namespace, r.name.slice(0, -CA_SUFFIX.length));
    const ca = secret && secretValue(secret, ["cacert", "ca.crt"]);
    if (!secret || !ca) return undefined;
    const crl = secretValue(secret, ["crl", "ca.crl"]);
    return create(tls.SecretSchema, {
      name: resourceName,
      type: {
        case: "validationContext",
        value: { trustedCa: inline(ca), ...(crl ? { crl: inline(crl) } : {}) },
      },
    });
  }
  const secret = secrets.secret(r.namespace, r.name);
  const cert = secret && secretValue(secret, ["cert", "tls.crt"]);
  const key = secret && secretValue(secret, ["key", "tls.key"]);
  if (!cert || !key) return undefined;
  return create(tls.SecretSchema, {
    name: resourceName,
    type: { case: "tlsCertificate", value: { certificateChain: inline(cert), privateKey: inline(key) } },
  });
}

/** The Secrets the proxy may read among `names`; a name it may not read, or that names no usable Secret, is left out. */
export function buildSecrets(
  push: MeshPush,
  proxy: ProxyNode,
  secrets: SecretLookup,
  names: Iterable<string>,
): tls.Secret[] {
  const namespace = identityNamespace(proxy);
  if (namespace === undefined || proxy.type !== "router") return [];
  const allowed = push.snapshot.mergedGateway(proxy)?.verifiedCredentials ?? new Set();
  const out: tls.Secret[] = [];
  for (const name of names) {
    const parsed = parseResource(name, namespace);
    const secret = parsed && allowed.has(name) ? buildSecret(secrets, name, parsed) : undefined;
    if (secret) out.push(secret);
  }
  return out;
}

/** Names of the Secrets `messages` fetch over ADS (SdsSecretConfigs with an ADS config source), Anys included. */
export function adsSecretNames(messages: readonly Message[]): string[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== "object" || value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    const typeName = (value as { $typeName?: string }).$typeName;
    if (typeName === "google.protobuf.Any") {
      visit(unpackAny(value as Any));
    } else if (typeName === "envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig") {
      const config = value as tls.SdsSecretConfig;
      if (config.sdsConfig?.configSourceSpecifier.case === "ads") names.add(config.name);
    } else {
      for (const field of Object.values(value)) visit(field);
    }
  };
  for (const message of messages) visit(message);
  return [...names];
}

/** SDS is named: the credentials asked for, on full pushes that may change them (Secrets, Gateways, or everything). */
export function sdsGenerator(secrets: SecretLookup): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      const keys = [...req.configsUpdated.values()];
      const relevant = keys.length === 0 || keys.some((k) => k.kind === SECRET_KIND || k.kind === GATEWAY_KIND);
      if (!req.full || !relevant || identityNamespace(proxy) === undefined) return undefined;
      const resources: XdsResource[] = buildSecrets(req.push, proxy, secrets, watched.resourceNames).map((s) => ({
        name: s.name,
        resource: s,
      }));
      return { resources };
    },
  };
}
