// Istio's benchmark configs (pilot/pkg/xds/testdata/benchmarks/*.yaml, Go templates executed with
// `.Services` and `.Instances`), written as TypeScript renderers of what each template generates, and
// the proxy and mesh its benchmarks (pilot/pkg/xds/bench_test.go) run with.
import { execFileSync } from "node:child_process";
import { type ProxySpec, type TranslateState, translateProxy } from "../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, type MeshConfig } from "../src/config/index.ts";
import type { NodeType, ProxyNode, PushFeatures } from "../src/model/index.ts";
import { storeAmbientIndex, storePush, storeRegistry } from "../src/model/store-push.ts";
import { ConfigStore, MemorySource } from "../src/sources/index.ts";
import { AMBIENT_OPTIONS } from "../test/support/ambient-options.ts";

export interface TemplateInput {
  services: number;
  /** WorkloadEntries (serviceentry-workloadentry only). */
  instances: number;
}

export interface Template {
  name: string;
  /** The proxy type Istio benchmarks the template with. */
  proxy: NodeType;
  /** The services Istio's benchmark case renders it with (bench_test.go's testCases), when not 100. */
  services?: number;
  render(input: TemplateInput): ConfigObject[];
}

export const DOMAIN_SUFFIX = "cluster.local";

/** Istio's default mesh plus the `envoy-json` access-log provider its benchmarks add. */
export const BENCH_MESH: MeshConfig = {
  ...DEFAULT_MESH_CONFIG,
  extensionProviders: [
    ...(DEFAULT_MESH_CONFIG.extensionProviders ?? []),
    { name: "envoy-json", envoyFileAccessLog: { path: "/dev/stdout", logFormat: { labels: {} } } },
  ],
};

/**
 * The benchmarks' proxy: `v0.default` at 1.1.1.1, labelled so that the templates' Gateways select it
 * (EDS benchmarks override the address and id).
 */
export function benchProxy(type: NodeType, overrides: Partial<ProxySpec> = {}): ProxyNode {
  const spec: ProxySpec = {
    type,
    ip: "1.1.1.1",
    namespace: "default",
    labels: { "istio.io/benchmark": "true" },
    id: "v0.default",
    ...overrides,
  };
  return translateProxy(spec, BENCH_MESH, DOMAIN_SUFFIX);
}

/** Istio's benchmarks run a mesh with a waypoint in ambient mode, as sluiced with PILOT_ENABLE_AMBIENT. */
const hasWaypoint = (objects: readonly ConfigObject[]) =>
  objects.some(
    (o) =>
      o.kind === "Gateway" &&
      (o.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName === "istio-waypoint",
  );

/**
 * Store → registry → push context over `objects` (with the push `features`, default istiod's); throws on
 * any object the control plane rejects. A mesh with a waypoint Gateway gets the ambient index (what its
 * waypoint serves is read from it), as in ambient mode.
 */
export function templateState(objects: readonly ConfigObject[], features: PushFeatures = {}): TranslateState {
  const store = new ConfigStore();
  const memory = new MemorySource(store, "bench");
  for (const object of objects) {
    const errors = memory.apply(object).errors;
    if (errors.length > 0) {
      throw new Error(`${object.kind} ${object.metadata.name}: ${errors.map((e) => e.message).join("; ")}`);
    }
  }
  const registry = storeRegistry(store, BENCH_MESH, DOMAIN_SUFFIX);
  const ambient = hasWaypoint(objects) ? storeAmbientIndex(store, AMBIENT_OPTIONS) : undefined;
  return {
    store,
    registry,
    push: storePush(store, registry, BENCH_MESH, DOMAIN_SUFFIX, undefined, features, ambient),
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** `a.b.{i / 255}.{i % 255}`, the templates' address numbering. */
const ip = (prefix: string, i: number) => `${prefix}.${Math.floor(i / 255)}.${i % 255}`;

/** Objects without a namespace land in `default`, as the benchmarks load them. */
function object(apiVersion: string, kind: string, name: string, spec: unknown, namespace = "default"): ConfigObject {
  return { apiVersion, kind, metadata: { name, namespace }, spec };
}

const NETWORKING = "networking.istio.io/v1";
const serviceEntry = (name: string, spec: unknown, namespace?: string) =>
  object(NETWORKING, "ServiceEntry", name, spec, namespace);

type Port = { number: number; name: string; protocol?: string; targetPort?: number };
const HTTP: Port = { number: 80, name: "http", protocol: "HTTP" };
const TCP: Port = { number: 7070, name: "tcp", protocol: "TCP" };
const HTTPS: Port = { number: 443, name: "https", protocol: "HTTPS" };
const AUTO: Port = { number: 9090, name: "auto" };
const ALL_PROTOCOLS = [HTTP, TCP, HTTPS, AUTO];
const MTLS_LABELS = { "security.istio.io/tlsMode": "istio" };
const BENCH_LABELS = { "istio.io/benchmark": "true" };

/** `example.com` at 1.1.1.1: the service the proxy itself belongs to. */
function proxyService(ports: Port[], options: { internal?: boolean; labels?: Record<string, string> } = {}) {
  return serviceEntry("proxy-service-instance", {
    hosts: ["example.com"],
    ports,
    resolution: "STATIC",
    ...(options.internal ? { location: "MESH_INTERNAL" } : {}),
    endpoints: [{ address: "1.1.1.1", ...(options.labels ? { labels: options.labels } : {}) }],
  });
}

/** http, tcp, tls, auto: N mesh-internal services on one port with a VIP and one mTLS endpoint. */
function onePortServices(port: Port): Template["render"] {
  return ({ services }) => [
    proxyService([port], { internal: true, labels: MTLS_LABELS }),
    ...range(services).map((i) =>
      serviceEntry(`service-${i}`, {
        addresses: [ip("240.240", i)],
        hosts: [`random-${i}.host.example`],
        ports: [port],
        resolution: "STATIC",
        location: "MESH_INTERNAL",
        endpoints: [{ address: ip("240.241", i), labels: MTLS_LABELS }],
      }),
    ),
  ];
}

/** An external service `random-i.host.example` on port 80 at 1.2.3.4. */
const randomHttpService = (i: number) =>
  serviceEntry(`service-${i}`, {
    hosts: [`random-${i}.host.example`],
    ports: [HTTP],
    resolution: "STATIC",
    endpoints: [{ address: "1.2.3.4" }],
  });

/** The proxy's service and N external services `random-i.host.example` at 1.2.3.4, all on every protocol. */
function externalServicesOnEveryProtocol(services: number): ConfigObject[] {
  return [
    proxyService(ALL_PROTOCOLS),
    ...range(services).map((i) =>
      serviceEntry(`service-${i}`, {
        hosts: [`random-${i}.host.example`],
        ports: ALL_PROTOCOLS,
        resolution: "STATIC",
        endpoints: [{ address: "1.2.3.4" }],
      }),
    ),
  ];
}

/** The proxy's own service on every protocol, under a mesh-wide PeerAuthentication mode. */
function peerAuthentication(mode: "STRICT" | "DISABLE"): Template["render"] {
  return () => [
    proxyService(ALL_PROTOCOLS),
    object("security.istio.io/v1", "PeerAuthentication", "default", { mtls: { mode } }),
  ];
}

/** An HTTP server on 80 and an ISTIO_MUTUAL HTTPS server on 443 for `hosts`, on the benchmark proxy. */
const gateway = (name: string, hosts: string[]) =>
  object(
    NETWORKING,
    "Gateway",
    name,
    {
      selector: BENCH_LABELS,
      servers: [
        { port: HTTP, hosts },
        { port: HTTPS, hosts, tls: { mode: "ISTIO_MUTUAL" } },
      ],
    },
    "gateway",
  );

/** A knative route: by authority prefix on one gateway, optionally only with `K-Network-Hash: override`. */
function knativeRoute(authority: string, gateway: string, target: string, networkHash?: string) {
  return {
    ...(networkHash ? { headers: { request: { set: { "K-Network-Hash": networkHash } } } } : {}),
    match: [
      {
        authority: { prefix: authority },
        gateways: [gateway],
        ...(networkHash ? { headers: { "K-Network-Hash": { exact: "override" } } } : {}),
      },
    ],
    route: [
      {
        destination: { host: `${target}.default.svc.cluster.local`, port: { number: 80 } },
        headers: {
          request: { set: { "Knative-Serving-Namespace": "default", "Knative-Serving-Revision": target } },
        },
        weight: 100,
      },
    ],
  };
}

const INGRESS = "knative-serving/knative-ingress-gateway";
const LOCAL = "knative-serving/knative-local-gateway";
// Knative's network hashes: any fixed 64-hex values serve.
const HELLO_HASH = "0647dfaebda7111f09cd1ee30dfb4cbdf540bcd47575c5f948106757b7110384";
const PRIVATE_HASH = "1235d057c5abf876f0b1fa3cb9e5d04730d98fb236badc4705aecc1159309b2b";

/**
 * A self-signed certificate and key (PEM, in that order) for the `secrets` template's TLS Secrets, made
 * once, by openssl: Node cannot sign certificates, and @peculiar/x509 needs a polyfill not shipped here.
 */
let credential: { cert: string; key: string } | undefined;
function selfSigned(): { cert: string; key: string } {
  if (credential) return credential;
  const pem = execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-subj",
      "/CN=api.company.com",
    ].concat(["-days", "3650", "-keyout", "-", "-out", "-"]),
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  const block = (label: string) => new RegExp(`-----BEGIN ${label}-----[^-]+-----END ${label}-----\n`).exec(pem)?.[0];
  const cert = block("CERTIFICATE");
  const key = block("PRIVATE KEY");
  if (!cert || !key) throw new Error("openssl made no certificate");
  credential = { cert, key };
  return credential;
}

export const TEMPLATES: readonly Template[] = [
  {
    name: "authorizationpolicy",
    proxy: "sidecar",
    render: ({ services }) => [
      proxyService([HTTP, HTTPS], { labels: BENCH_LABELS }),
      ...range(services).map((i) =>
        object("security.istio.io/v1", "AuthorizationPolicy", `authn-${i}`, {
          action: "DENY",
          rules: [{ from: [{ source: { namespaces: ["default"] } }], to: [{ operation: { methods: ["POST"] } }] }],
        }),
      ),
    ],
  },
  { name: "auto", proxy: "sidecar", render: onePortServices({ number: 7070, name: "auto" }) },
  { name: "disabled", proxy: "sidecar", render: peerAuthentication("DISABLE") },
  {
    // Four ports per service; the VIP 127.0.0.i only holds for fewer than 256 services.
    name: "empty",
    proxy: "sidecar",
    render: ({ services }) => [
      proxyService(ALL_PROTOCOLS, { internal: true, labels: MTLS_LABELS }),
      ...range(services).map((i) =>
        serviceEntry(`service-${i}`, {
          hosts: [`random-${i}.host.example`],
          addresses: [`127.0.0.${i}`],
          ports: ALL_PROTOCOLS,
          resolution: "STATIC",
          location: "MESH_INTERNAL",
          endpoints: [{ address: "1.2.3.4", labels: MTLS_LABELS }],
        }),
      ),
    ],
  },
  {
    // `empty` as Istio's published ClusterGeneration/empty figure (istio/istio#25116, June 2020) measured
    // it: before istio/istio#26514 (August 2020) made its services mesh-internal with mTLS endpoints,
    // they were MESH_EXTERNAL with neither VIPs nor tlsMode labels, so no auto-mTLS transport socket.
    name: "empty-2020",
    proxy: "sidecar",
    render: ({ services }) => [...externalServicesOnEveryProtocol(services)],
  },
  {
    name: "externalname",
    proxy: "sidecar",
    render: ({ services }) => [
      proxyService([HTTP], { internal: true, labels: MTLS_LABELS }),
      ...range(services).map(
        (i): ConfigObject => ({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: `service-${i}`, namespace: "default" },
          spec: { type: "ExternalName", externalName: `random-${i}.example.com`, ports: [{ port: 80, name: "http" }] },
        }),
      ),
    ],
  },
  {
    // One Gateway for three hosts, and N VirtualServices adding six prefixes each to all three.
    name: "gateways-shared",
    proxy: "router",
    services: 1000,
    render: ({ services }) => {
      const hosts = [1, 2, 3].map((n) => `random-${n}.host.example`);
      return [
        proxyService([HTTP, HTTPS], { labels: BENCH_LABELS }),
        gateway("gateway", hosts),
        ...range(services).flatMap((i) => [
          object(
            NETWORKING,
            "VirtualService",
            `vs-${i}`,
            {
              hosts,
              gateways: ["gateway/gateway"],
              http: [
                {
                  match: ["a", "b", "c", "d", "e", "f"].map((r) => ({ uri: { prefix: `/route-${r}-${i}` } })),
                  route: [{ destination: { host: `random-${i}.host.example` } }],
                },
              ],
            },
            "gateway",
          ),
          randomHttpService(i),
        ]),
      ];
    },
  },
  {
    // N Gateways, each with its own three hosts and a VirtualService for them.
    name: "gateways",
    proxy: "router",
    services: 1000,
    render: ({ services }) => [
      proxyService([HTTP, HTTPS], { labels: BENCH_LABELS }),
      ...range(services).flatMap((i) => {
        const hosts = ["a", "b", "c"].map((x) => `random-${x}-${i}.host.example`);
        return [
          object(
            NETWORKING,
            "VirtualService",
            `vs-${i}`,
            {
              hosts,
              gateways: [`gateway/gateway-${i}`],
              http: [
                {
                  match: [{ uri: { prefix: `/route-${i}` } }],
                  route: [{ destination: { host: `random-${i}.host.example` } }],
                },
              ],
            },
            "gateway",
          ),
          gateway(`gateway-${i}`, hosts),
          randomHttpService(i),
        ];
      }),
    ],
  },
  { name: "http", proxy: "sidecar", render: onePortServices(HTTP) },
  {
    // What knative makes of N KServices `hello-i` and `hello-private-i`: all share the same hosts.
    name: "knative-gateway",
    proxy: "router",
    render: ({ services }) => {
      const gatewayService = (name: string, host: string, targetPort: number) =>
        serviceEntry(
          name,
          {
            hosts: [host],
            ports: [{ ...HTTP, targetPort }],
            resolution: "STATIC",
            endpoints: [{ address: "1.1.1.1", labels: BENCH_LABELS }],
          },
          "istio-system",
        );
      const knativeGateway = (name: string, number: number) =>
        object(
          NETWORKING,
          "Gateway",
          name,
          { selector: BENCH_LABELS, servers: [{ hosts: ["*"], port: { name: "http", number, protocol: "HTTP" } }] },
          "knative-serving",
        );
      return [
        gatewayService("external", "istio-ingressgateway.istio-system.svc.cluster.local", 8080),
        gatewayService("internal", "knative-local-gateway.istio-system.svc.cluster.local", 8081),
        knativeGateway("knative-ingress-gateway", 80),
        knativeGateway("knative-local-gateway", 8081),
        ...range(services).flatMap((i) => [
          object(NETWORKING, "VirtualService", `hello-ingress-${i}`, {
            gateways: [INGRESS, LOCAL],
            hosts: [
              "hello.default",
              "hello.default.external.domain",
              "hello.default.svc",
              "hello.default.svc.cluster.local",
            ],
            http: [
              knativeRoute("hello.default", LOCAL, `hello-${i}`, HELLO_HASH),
              knativeRoute("hello.default", LOCAL, `hello-${i}`),
              knativeRoute("hello.default.external.domain", INGRESS, `hello-${i}`, HELLO_HASH),
              knativeRoute("hello.default.external.domain", INGRESS, `hello-${i}`),
            ],
          }),
          object(NETWORKING, "VirtualService", `hello-private-ingress-${i}`, {
            gateways: [LOCAL],
            hosts: ["hello-private.default", "hello-private.default.svc", "hello-private.default.svc.cluster.local"],
            http: [
              knativeRoute("hello-private.default", LOCAL, `hello-private-${i}`, PRIVATE_HASH),
              knativeRoute("hello-private.default", LOCAL, `hello-private-${i}`),
            ],
          }),
        ]),
      ];
    },
  },
  {
    name: "secrets",
    proxy: "router",
    render: ({ services }) => {
      const { cert, key } = selfSigned();
      return range(services).map(
        (i): ConfigObject => ({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: `sds-credential-${i}`, namespace: "default" },
          type: "kubernetes.io/tls",
          data: {
            "tls.crt": Buffer.from(cert).toString("base64"),
            "tls.key": Buffer.from(key).toString("base64"),
          },
        }),
      );
    },
  },
  {
    // Services selecting WorkloadEntries by `app`; instance j belongs to service j mod N.
    name: "serviceentry-workloadentry",
    proxy: "sidecar",
    render: ({ services, instances }) => [
      proxyService(ALL_PROTOCOLS, { internal: true, labels: MTLS_LABELS }),
      ...range(services).map((i) =>
        serviceEntry(`service-${i}`, {
          hosts: [`random-${i}.host.example`],
          ports: ALL_PROTOCOLS,
          resolution: "STATIC",
          location: "MESH_INTERNAL",
          workloadSelector: { labels: { app: `random-${i}` } },
        }),
      ),
      ...range(instances).map((j) =>
        object(NETWORKING, "WorkloadEntry", `random-${j}`, {
          serviceAccount: "random",
          address: ip("240.241", j),
          labels: { app: `random-${j % services}` },
        }),
      ),
    ],
  },
  { name: "strict", proxy: "sidecar", render: peerAuthentication("STRICT") },
  { name: "tcp", proxy: "sidecar", render: onePortServices(TCP) },
  {
    // Prometheus metrics and JSON access logs mesh-wide, over services on every protocol.
    name: "telemetry-api",
    proxy: "sidecar",
    render: ({ services }) => [
      object(
        "telemetry.istio.io/v1",
        "Telemetry",
        "telemetry",
        {
          metrics: [{ providers: [{ name: "prometheus" }] }],
          accessLogging: [{ providers: [{ name: "envoy-json" }] }],
        },
        "istio-system",
      ),
      ...externalServicesOnEveryProtocol(services),
    ],
  },
  { name: "tls", proxy: "sidecar", render: onePortServices({ number: 7070, name: "tls", protocol: "TLS" }) },
  {
    name: "virtualservice",
    proxy: "sidecar",
    render: ({ services }) => [
      proxyService([HTTP]),
      ...range(services).flatMap((i) => [
        object(NETWORKING, "VirtualService", `vs-${i}`, {
          hosts: [`random-${i}.host.example`],
          http: [
            {
              name: "match-route",
              match: [{ uri: { prefix: "/foo" } }, { uri: { regex: "/bar" } }],
              rewrite: { uri: "/new-url" },
              route: [{ destination: { host: `random-${i}.host.example` } }],
            },
          ],
        }),
        randomHttpService(i),
      ]),
    ],
  },
  {
    // A waypoint for example.com (VIP 2.2.2.2) that N services on HTTP and TCP use.
    name: "waypoint",
    proxy: "waypoint",
    render: ({ services }) => [
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: "waypoint", namespace: "default" },
        spec: { gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
        status: { addresses: [{ value: "example.com", type: "Hostname" }] },
      },
      serviceEntry("waypoint", {
        addresses: ["2.2.2.2"],
        hosts: ["example.com"],
        ports: [HTTP],
        resolution: "STATIC",
        location: "MESH_INTERNAL",
        endpoints: [{ address: "1.1.1.1", labels: MTLS_LABELS }],
      }),
      ...range(services).map(
        (i): ConfigObject => ({
          ...serviceEntry(`service-${i}`, {
            addresses: [ip("240.240", i)],
            hosts: [`random-${i}.host.example`],
            ports: [HTTP, TCP],
            resolution: "STATIC",
            location: "MESH_INTERNAL",
            endpoints: [{ address: ip("240.241", i), labels: MTLS_LABELS }],
          }),
          metadata: { name: `service-${i}`, namespace: "default", labels: { "istio.io/use-waypoint": "waypoint" } },
        }),
      ),
    ],
  },
];

export function template(name: string): Template {
  const found = TEMPLATES.find((t) => t.name === name);
  if (!found) throw new Error(`no benchmark template ${name}`);
  return found;
}
