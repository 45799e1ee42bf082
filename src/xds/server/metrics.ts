// The xDS server's Prometheus metrics under Istio's names (pilot/pkg/xds/monitoring.go and
// pkg/xds/monitoring.go), on a registry the caller owns, plus grpc-prometheus style counters for every RPC.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { metricType, TypeUrl } from "../types.ts";

/** Go's codes.Code.String(): the name of a gRPC status code, `Code(n)` for one outside the table. */
const GRPC_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

export function grpcCodeName(code: number): string {
  return GRPC_CODE_NAMES[code] ?? `Code(${code})`;
}

export class XdsMetrics {
  /** pilot_xds: connected xDS clients, by Istio version. */
  readonly connections: Gauge<"version">;
  /** pilot_xds_pushes: responses sent, by type (`cds`, `eds`, ..., `<type>_senderr` when the write fails). */
  readonly pushes: Counter<"type">;
  readonly pushTime: Histogram<"type">;
  readonly rejects: Counter<"type">;
  readonly configSize: Histogram<"type">;
  readonly convergence: Histogram;
  readonly queueTime: Histogram;
  readonly expiredNonce: Counter<"type">;
  /** pilot_xds_send_time: how long each response took to be handed to the transport. */
  readonly sendTime: Histogram;
  /** pilot_xds_write_timeout: responses whose write ended with DEADLINE_EXCEEDED. */
  readonly writeTimeouts: Counter;
  /** pilot_xds_recv_max: the largest request message received so far, in bytes. */
  readonly recvMax: Gauge;
  /** pilot_xds_{cds,eds,lds,rds}_reject by type URL: Istio's older per-type NACK gauges, by node and error code. */
  readonly typeRejects: ReadonlyMap<string, Gauge<"node" | "err">>;
  #recvMax = 0;
  /** pilot_total_xds_internal_errors: a generator threw or produced something unencodable. */
  readonly internalErrors: Counter;
  readonly rpcStarted: Counter<"grpc_type" | "grpc_service" | "grpc_method">;
  readonly rpcHandled: Counter<"grpc_type" | "grpc_service" | "grpc_method" | "grpc_code">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.connections = new Gauge({
      name: "pilot_xds",
      help: "Number of endpoints connected to this pilot using XDS.",
      labelNames: ["version"],
      registers,
    });
    this.pushes = new Counter({
      name: "pilot_xds_pushes",
      help: "Pilot build and send errors for lds, rds, cds and eds.",
      labelNames: ["type"],
      registers,
    });
    this.pushTime = new Histogram({
      name: "pilot_xds_push_time",
      help: "Total time in seconds Pilot takes to push lds, rds, cds and eds.",
      labelNames: ["type"],
      buckets: [0.01, 0.1, 1, 3, 5, 10, 20, 30],
      registers,
    });
    this.rejects = new Counter({
      name: "pilot_total_xds_rejects",
      help: "Total number of XDS responses from pilot rejected by proxy.",
      labelNames: ["type"],
      registers,
    });
    this.configSize = new Histogram({
      name: "pilot_xds_config_size_bytes",
      help: "Distribution of configuration sizes pushed to clients",
      labelNames: ["type"],
      buckets: [1, 10000, 1000000, 4000000, 10000000, 40000000],
      registers,
    });
    this.convergence = new Histogram({
      name: "pilot_proxy_convergence_time",
      help: "Delay in seconds between config change and a proxy receiving all required configuration.",
      buckets: [0.1, 0.5, 1, 3, 5, 10, 20, 30],
      registers,
    });
    this.queueTime = new Histogram({
      name: "pilot_proxy_queue_time",
      help: "Time in seconds, a proxy is in the push queue before being dequeued.",
      buckets: [0.1, 0.5, 1, 3, 5, 10, 20, 30],
      registers,
    });
    this.expiredNonce = new Counter({
      name: "pilot_xds_expired_nonce",
      help: "Total number of XDS requests with an expired nonce.",
      labelNames: ["type"],
      registers,
    });
    this.sendTime = new Histogram({
      name: "pilot_xds_send_time",
      help: "Total time in seconds Pilot takes to send generated configuration.",
      buckets: [0.01, 0.1, 1, 3, 5, 10, 20, 30],
      registers,
    });
    this.writeTimeouts = new Counter({
      name: "pilot_xds_write_timeout",
      help: "Pilot XDS response write timeouts.",
      registers,
    });
    this.recvMax = new Gauge({
      name: "pilot_xds_recv_max",
      help: "The maximum size request we have received so far.",
      registers,
    });
    // Gauges that only go up, as Istio declares them ("pilot_total_xds_rejects should be used instead").
    const rejectGauge = (type: string, help: string) =>
      new Gauge({ name: `pilot_xds_${type}_reject`, help, labelNames: ["node", "err"], registers });
    this.typeRejects = new Map([
      [TypeUrl.Cluster, rejectGauge("cds", "Pilot rejected CDS configs.")],
      [TypeUrl.Endpoint, rejectGauge("eds", "Pilot rejected EDS.")],
      [TypeUrl.Listener, rejectGauge("lds", "Pilot rejected LDS.")],
      [TypeUrl.Route, rejectGauge("rds", "Pilot rejected RDS.")],
    ]);
    this.internalErrors = new Counter({
      name: "pilot_total_xds_internal_errors",
      help: "Total number of internal XDS errors in pilot.",
      registers,
    });
    this.rpcStarted = new Counter({
      name: "grpc_server_started_total",
      help: "Total number of RPCs started on the server.",
      labelNames: ["grpc_type", "grpc_service", "grpc_method"],
      registers,
    });
    this.rpcHandled = new Counter({
      name: "grpc_server_handled_total",
      help: "Total number of RPCs completed on the server, regardless of success or failure.",
      labelNames: ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
      registers,
    });
  }

  /** A request message of `bytes` arrived: pilot_xds_recv_max keeps the largest. */
  recordRecvSize(bytes: number): void {
    if (bytes <= this.#recvMax) return;
    this.#recvMax = bytes;
    this.recvMax.set(bytes);
  }

  /**
   * A proxy rejected a response (Istio's IncrementXDSRejects): pilot_total_xds_rejects by type and,
   * for CDS, EDS, LDS and RDS, pilot_xds_<type>_reject by the proxy's id and the error's gRPC code name.
   */
  recordReject(typeUrl: string, node: string, code: number): void {
    this.rejects.inc({ type: metricType(typeUrl) });
    this.typeRejects.get(typeUrl)?.inc({ node, err: grpcCodeName(code) });
  }
}
