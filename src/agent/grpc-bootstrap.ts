// The gRPC xDS bootstrap file the agent writes for proxyless workloads, in the shape of Istio's
// pkg/istio-agent/grpcxds/grpc_bootstrap.go: one xDS server, the node (metadata with GENERATOR=grpc),
// the server listener name template, and a file_watcher certificate provider over the files the agent
// keeps fresh. Written as Go's json.MarshalIndent writes it (2 spaces, metadata keys sorted).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { GrpcLocality } from "./node.ts";

export const SERVER_LISTENER_NAME_PREFIX = "xds.istio.io/grpc/lds/inbound/";
export const SERVER_LISTENER_NAME_TEMPLATE = `${SERVER_LISTENER_NAME_PREFIX}%s`;
/** Where pilot-agent writes the bootstrap when GRPC_XDS_BOOTSTRAP is unset (constants.ConfigPathDir). */
export const DEFAULT_GRPC_BOOTSTRAP_PATH = "./etc/istio/proxy/grpc-bootstrap.json";
/** Istio refreshes the certificate files every 15 minutes. */
const CERT_REFRESH_INTERVAL = "900s";

export interface FileWatcherConfig {
  certificate_file: string;
  private_key_file: string;
  ca_certificate_file: string;
  refresh_interval: string;
}

export interface ChannelCreds {
  type: string;
  config?: JsonObject;
}

export interface GrpcBootstrap {
  xds_servers: { server_uri: string; channel_creds: ChannelCreds[]; server_features: string[] }[];
  node: { id: string; metadata: JsonObject; locality: GrpcLocality; UserAgentVersionType: null };
  certificate_providers?: Record<string, { plugin_name: string; config: FileWatcherConfig }>;
  server_listener_resource_name_template: string;
}

export interface GrpcBootstrapOptions {
  nodeId: string;
  metadata: JsonObject;
  locality: GrpcLocality;
  discoveryAddress: string;
  /** Directory of cert-chain.pem, key.pem and root-cert.pem (Istio's OUTPUT_CERTS); none when unset. */
  certDir?: string;
  /**
   * How the client reaches the xDS server. Istio always writes "insecure" (the agent is local); "tls"
   * writes gRFC A65's tls credentials over the certificate files, for clients that dial istiod directly.
   */
  channelCreds?: "insecure" | "tls";
}

function certificateFiles(certDir: string): FileWatcherConfig {
  return {
    certificate_file: join(certDir, "cert-chain.pem"),
    private_key_file: join(certDir, "key.pem"),
    ca_certificate_file: join(certDir, "root-cert.pem"),
    refresh_interval: CERT_REFRESH_INTERVAL,
  };
}

/** The bootstrap for these options. GENERATOR is forced to "grpc": Istio does it here, not through env. */
export function grpcBootstrap(options: GrpcBootstrapOptions): GrpcBootstrap {
  const files = options.certDir ? certificateFiles(options.certDir) : undefined;
  let creds: ChannelCreds = { type: "insecure" };
  if (options.channelCreds === "tls") {
    if (!files) throw new Error("tls channel credentials need the certificate directory (OUTPUT_CERTS)");
    creds = { type: "tls", config: { ...files } };
  }
  const bootstrap: GrpcBootstrap = {
    xds_servers: [{ server_uri: options.discoveryAddress, channel_creds: [creds], server_features: ["xds_v3"] }],
    node: {
      id: options.nodeId,
      metadata: sortKeys({ ...options.metadata, GENERATOR: "grpc" }) as JsonObject,
      locality: options.locality,
      UserAgentVersionType: null,
    },
    server_listener_resource_name_template: SERVER_LISTENER_NAME_TEMPLATE,
  };
  if (files) bootstrap.certificate_providers = { default: { plugin_name: "file_watcher", config: files } };
  // Key order as Go writes the struct: providers before the template.
  const { server_listener_resource_name_template, ...rest } = bootstrap;
  return { ...rest, server_listener_resource_name_template };
}

/** Protobuf Struct JSON has its keys sorted at every level. */
function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key] as JsonValue);
  return out;
}

/** JSON as Go's encoding/json writes it: HTML-sensitive characters and line separators escaped. */
function goJson(value: GrpcBootstrap): string {
  return JSON.stringify(value, null, 2).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Writes the bootstrap atomically (a reader never sees half a file), creating its directory. */
export function writeGrpcBootstrap(path: string, bootstrap: GrpcBootstrap): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, goJson(bootstrap), { mode: 0o644 });
  renameSync(temp, path);
}

/** The certificate files a bootstrap's file_watcher provider names, if it has one. */
export function fileWatcherPaths(bootstrap: GrpcBootstrap): string[] {
  for (const provider of Object.values(bootstrap.certificate_providers ?? {})) {
    if (provider.plugin_name !== "file_watcher") continue;
    const c = provider.config;
    return [c.certificate_file, c.private_key_file, c.ca_certificate_file];
  }
  return [];
}

/** Reads a bootstrap file back (throws when it is missing or not JSON). */
export function loadGrpcBootstrap(path: string): GrpcBootstrap {
  return JSON.parse(readFileSync(path, "utf8")) as GrpcBootstrap;
}
