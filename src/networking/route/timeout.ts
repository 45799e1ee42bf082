// Route timeouts (Istio route.go setTimeout): the VirtualService timeout, else 0s (Envoy's 15s default
// turned off). Envoy proxies get the same value as max_grpc_timeout; proxyless gRPC, which reads only
// max_stream_duration, gets it there.
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import { toDuration, ZERO_DURATION } from "../duration.ts";
import type { ProxyNode } from "./types.ts";

export function isProxylessGrpc(proxy: ProxyNode | undefined): boolean {
  return proxy?.generator === "grpc";
}

export function applyTimeout(
  action: route.RouteAction,
  timeout: string | undefined,
  proxy: ProxyNode | undefined,
): void {
  action.timeout = toDuration(timeout) ?? ZERO_DURATION;
  if (isProxylessGrpc(proxy)) {
    action.maxStreamDuration = create(route.RouteAction_MaxStreamDurationSchema, {
      maxStreamDuration: action.timeout,
    });
  } else {
    action.maxGrpcTimeout = action.timeout;
  }
}
