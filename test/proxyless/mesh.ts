// The proxyless gRPC test bench: Sluice's discovery service in-process over a config store (the
// `grpc` generator for LDS/RDS/CDS, the sidecars' EDS), grpc-js-xds bootstrapped against it, and
// builders for the Istio objects the tests apply. Services are ServiceEntries whose endpoints are
// the test backends on 127.0.0.1.
import { Client, credentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import type { ConfigObject } from "../../src/config/index.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { type Discovery, TypeUrl } from "../../src/xds/index.ts";
import type { DebounceOptions } from "../../src/xds/pipeline/debounce.ts";
import { freePort } from "../support/free-port.ts";
import { startStoreDiscovery } from "../support/store-discovery.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import type { Backend } from "./echo.ts";

export const NAMESPACE = "default";
export const DOMAIN = `${NAMESPACE}.svc.cluster.local`;
export const ECHO_HOST = `echo.${DOMAIN}`;
export const ECHO_PORT = 7070;
export const CLIENT_ID = `client.${NAMESPACE}`;

export class ControlPlane {
  readonly store = new ConfigStore();
  readonly memory = new MemorySource(this.store);
  discovery?: Discovery;
  private constructor(
    readonly port: number,
    private readonly debounce: DebounceOptions,
  ) {}

  /**
   * Starts Sluice's discovery service over `objects` on a fixed port (so that a restart keeps it),
   * with a short push debounce unless told otherwise.
   */
  static async start(
    objects: ConfigObject[],
    debounce: DebounceOptions = { afterMs: 5, maxMs: 50, edsDebounce: true },
  ): Promise<ControlPlane> {
    const cp = new ControlPlane(await freePort(), debounce);
    for (const obj of objects) cp.apply(obj);
    await cp.resume();
    return cp;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Writes an object to the store; the push pipeline carries it to the clients. */
  apply(obj: ConfigObject): void {
    const admission = this.memory.apply(obj);
    if (admission.errors.length > 0)
      throw new Error(`${obj.kind} ${obj.metadata.name}: ${JSON.stringify(admission.errors)}`);
  }

  /**
   * Writes an object and waits until its push has been sent and the proxy has answered every type
   * (ACK or NACK). The client may still ask for new names (subset clusters) after that.
   */
  async applyAndSettle(obj: ConfigObject, proxyId = CLIENT_ID): Promise<void> {
    const server = this.discovery?.server;
    if (!server) throw new Error("the control plane is stopped");
    const before = server.pushContext;
    this.apply(obj);
    await waitFor(() => server.pushContext !== before, `the push of ${obj.kind} ${obj.metadata.name}`);
    await server.pushesDone();
    await waitFor(() => {
      const conn = server.syncStatus().find((s) => s.proxy.id === proxyId);
      // A proxy not connected yet gets the new config when it connects.
      return (
        conn === undefined ||
        (conn.pushVersion === server.pushContext?.version && conn.types.every((t) => t.state !== "STALE"))
      );
    }, `${proxyId} to answer the push`);
  }

  /** Starts (again) serving, from what the store holds now. */
  async resume(): Promise<void> {
    this.discovery = await startStoreDiscovery(this.store, { debounce: this.debounce, grpcAddr: this.address });
  }

  /** Stops serving: every stream ends, the port closes. */
  async stop(): Promise<void> {
    await this.discovery?.stop(0);
    this.discovery = undefined;
  }

  /** The sync state of one type for the connected proxy whose id is `proxyId`. */
  typeStatus(proxyId: string, typeUrl: string) {
    return this.discovery?.server
      .syncStatus()
      .find((s) => s.proxy.id === proxyId)
      ?.types.find((t) => t.typeUrl === typeUrl);
  }
}

export interface NodeOptions {
  id?: string;
  locality?: { region?: string; zone?: string; sub_zone?: string };
  labels?: Record<string, string>;
  /** More node metadata (CLUSTER_ID, ISTIO_VERSION, ...). */
  metadata?: Record<string, unknown>;
}

/** Istio's proxyless bootstrap shape (pkg/istio-agent/grpcxds) for a workload at 127.0.0.1. */
export function bootstrap(cp: Pick<ControlPlane, "address">, node: NodeOptions = {}): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: cp.address, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: {
      id: `sidecar~127.0.0.1~${node.id ?? CLIENT_ID}~${DOMAIN}`,
      metadata: {
        NAMESPACE,
        GENERATOR: "grpc",
        LABELS: node.labels ?? {},
        INSTANCE_IPS: "127.0.0.1",
        ...node.metadata,
      },
      locality: node.locality ?? {},
    },
    server_listener_resource_name_template: "xds.istio.io/grpc/lds/inbound/%s",
  });
}

/** Points grpc-js-xds (the process-wide xDS client) at the control plane. Call once per test file. */
export function useControlPlane(cp: Pick<ControlPlane, "address">, node: NodeOptions = {}): void {
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = bootstrap(cp, node);
  grpcXds.register();
}

/** A client of `xds:///<target>`. */
export function xdsClient(target = `${ECHO_HOST}:${ECHO_PORT}`): Client {
  return new Client(`xds:///${target}`, credentials.createInsecure());
}

export interface EndpointOptions {
  backend: Backend;
  labels?: Record<string, string>;
  /** `region/zone/subzone`. */
  locality?: string;
}

/** The echo service: a ServiceEntry with one static endpoint per backend. */
export function echoService(endpoints: EndpointOptions[], name = "echo"): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name, namespace: NAMESPACE },
    spec: {
      hosts: [`${name}.${DOMAIN}`],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      ports: [{ number: ECHO_PORT, name: "grpc", protocol: "GRPC" }],
      endpoints: endpoints.map((e) => ({
        address: "127.0.0.1",
        ports: { grpc: e.backend.port },
        labels: e.labels ?? {},
        ...(e.locality ? { locality: e.locality } : {}),
      })),
    },
  };
}

export function virtualService(http: unknown[], name = "echo"): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace: NAMESPACE },
    spec: { hosts: [ECHO_HOST], http },
  };
}

export function destinationRule(spec: Record<string, unknown>, name = "echo"): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "DestinationRule",
    metadata: { name, namespace: NAMESPACE },
    spec: { host: ECHO_HOST, ...spec },
  };
}

/** The v1/v2 subsets by the `version` label. */
export const VERSION_SUBSETS = [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
];

/** The echo service on a v1 and a v2 backend, and the DestinationRule naming the versions as subsets. */
export function versionedEcho(v1: Backend, v2: Backend): ConfigObject[] {
  return [
    echoService([
      { backend: v1, labels: { version: "v1" } },
      { backend: v2, labels: { version: "v2" } },
    ]),
    destinationRule({ subsets: VERSION_SUBSETS }),
  ];
}

/** `outbound|7070|<subset>|echo...`. */
export function echoCluster(subset = ""): string {
  return `outbound|${ECHO_PORT}|${subset}|${ECHO_HOST}`;
}

export { TypeUrl };
