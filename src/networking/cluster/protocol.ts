// The upstream HTTP protocol of a cluster: `typed_extension_protocol_options` keyed
// `envoy.extensions.upstreams.http.v3.HttpProtocolOptions` (Istio's clusterWrapper.httpProtocolOptions).
// Several steps contribute (port protocol, connection pool, h2 upgrade, TLS auto SNI), so they fill a
// plain draft that becomes one message at the end.
import { create } from "@bufbuild/protobuf";
import type { Any, Duration } from "@bufbuild/protobuf/wkt";
import { type cluster, core, httpProtocolOptions, packAny } from "../../api/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { type Memos, mapTable } from "../../util/index.ts";

export const HTTP_PROTOCOL_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

export interface HttpOptionsDraft {
  /** explicit HTTP/2, or "whatever the downstream spoke"; explicit HTTP/1.1 when unset and anything else is set. */
  upstream?: "http2" | "downstream";
  idleTimeout?: Duration;
  maxConnectionDuration?: Duration;
  maxRequestsPerConnection?: number;
  maxConcurrentStreams?: number;
  autoSni?: boolean;
  autoSanValidation?: boolean;
}

/** Istio's IsHTTP2: the protocols that are HTTP/2 on the wire. */
export function isHttp2Protocol(protocol: ServiceProtocol): boolean {
  return protocol === "HTTP2" || protocol === "GRPC" || protocol === "GRPC-Web";
}

/** Istio's IsHTTP. */
export function isHttpProtocol(protocol: ServiceProtocol): boolean {
  return protocol === "HTTP" || protocol === "HTTP_PROXY" || isHttp2Protocol(protocol);
}

/** The draft's message, or undefined when nothing was set (plain HTTP/1.1 and TCP clusters carry none). */
export function httpProtocolOptionsAny(
  memos: Memos,
  draft: HttpOptionsDraft,
): cluster.Cluster["typedExtensionProtocolOptions"] | undefined {
  const key = draftKey(draft);
  const optionsByDraft = memos.map(OPTIONS_BY_DRAFT);
  let options = optionsByDraft.get(key);
  if (options === undefined) {
    options = buildHttpProtocolOptions(draft);
    // A bound, as settings come and go with config; the few in use are built again.
    if (optionsByDraft.size >= MAX_DISTINCT_OPTIONS) optionsByDraft.clear();
    optionsByDraft.set(key, options);
  }
  return options === null ? undefined : { [HTTP_PROTOCOL_OPTIONS_KEY]: options };
}

// Most clusters share one of a few drafts: one packed message per distinct draft, shared by their
// clusters (generated messages are never changed once built).
const OPTIONS_BY_DRAFT = mapTable<string, Any | null>("cluster/httpProtocolOptions");
const MAX_DISTINCT_OPTIONS = 1000;

function durationKey(d: Duration | undefined): string {
  return d ? `${d.seconds}.${d.nanos}` : "";
}

function draftKey(d: HttpOptionsDraft): string {
  // Most drafts set at most the upstream protocol: a constant key, not a new string to build and hash
  // (a full key always holds "|", so the two kinds never meet).
  const onlyUpstream =
    d.idleTimeout === undefined &&
    d.maxConnectionDuration === undefined &&
    d.maxRequestsPerConnection === undefined &&
    d.maxConcurrentStreams === undefined &&
    d.autoSni === undefined &&
    d.autoSanValidation === undefined;
  if (onlyUpstream) return d.upstream ?? "";
  return [
    d.upstream ?? "",
    durationKey(d.idleTimeout),
    durationKey(d.maxConnectionDuration),
    d.maxRequestsPerConnection ?? "",
    d.maxConcurrentStreams ?? "",
    d.autoSni ?? "",
    d.autoSanValidation ?? "",
  ].join("|");
}

function buildHttpProtocolOptions(draft: HttpOptionsDraft): Any | null {
  const hasCommon =
    draft.idleTimeout !== undefined ||
    draft.maxConnectionDuration !== undefined ||
    draft.maxRequestsPerConnection !== undefined;
  const hasUpstreamHttp = draft.autoSni === true || draft.autoSanValidation === true;
  if (!draft.upstream && !hasCommon && !hasUpstreamHttp) return null;
  const upstreamProtocolOptions: httpProtocolOptions.HttpProtocolOptions["upstreamProtocolOptions"] =
    draft.upstream === "downstream"
      ? {
          case: "useDownstreamProtocolConfig",
          value: create(httpProtocolOptions.HttpProtocolOptions_UseDownstreamHttpConfigSchema, {
            httpProtocolOptions: {},
            http2ProtocolOptions: {},
          }),
        }
      : {
          case: "explicitHttpConfig",
          value: create(
            httpProtocolOptions.HttpProtocolOptions_ExplicitHttpConfigSchema,
            draft.upstream === "http2"
              ? {
                  protocolConfig: {
                    case: "http2ProtocolOptions",
                    value: create(core.Http2ProtocolOptionsSchema, {
                      maxConcurrentStreams: draft.maxConcurrentStreams,
                    }),
                  },
                }
              : { protocolConfig: { case: "httpProtocolOptions", value: create(core.Http1ProtocolOptionsSchema) } },
          ),
        };
  const options = create(httpProtocolOptions.HttpProtocolOptionsSchema, {
    commonHttpProtocolOptions: hasCommon
      ? {
          idleTimeout: draft.idleTimeout,
          maxConnectionDuration: draft.maxConnectionDuration,
          maxRequestsPerConnection: draft.maxRequestsPerConnection,
        }
      : undefined,
    upstreamHttpProtocolOptions: hasUpstreamHttp
      ? { autoSni: draft.autoSni === true, autoSanValidation: draft.autoSanValidation === true }
      : undefined,
    upstreamProtocolOptions,
  });
  return packAny(httpProtocolOptions.HttpProtocolOptionsSchema, options);
}
