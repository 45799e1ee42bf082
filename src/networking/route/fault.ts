// VirtualService `fault` → the per-route config of envoy.filters.http.fault (Istio route.go
// TranslateFault): a fixed delay and/or an HTTP or gRPC abort. Exponential delays and HTTP/2 errors
// are not supported by Istio and are dropped; a fault with neither part left is none.
import { create } from "@bufbuild/protobuf";
import { fault } from "../../api/index.ts";
import { GRPC_STATUS_CODES, type VirtualServiceHttpFault } from "../../config/index.ts";
import { toDuration } from "../duration.ts";
import { integerToFractional, percentToFractional } from "./percent.ts";

export const FAULT_FILTER = "envoy.filters.http.fault";

export function translateFault(input: VirtualServiceHttpFault): fault.HTTPFault | undefined {
  const delay = input.delay;
  const fixedDelay = toDuration(delay?.fixedDelay);
  const out = create(fault.HTTPFaultSchema, {
    delay:
      delay && fixedDelay
        ? {
            faultDelaySecifier: { case: "fixedDelay", value: fixedDelay },
            percentage:
              delay.percentage !== undefined
                ? percentToFractional(delay.percentage.value ?? 0)
                : integerToFractional(delay.percent ?? 0),
          }
        : undefined,
  });
  const abort = input.abort;
  if (abort) {
    let errorType: fault.FaultAbort["errorType"] = { case: undefined };
    if (abort.httpStatus !== undefined) errorType = { case: "httpStatus", value: abort.httpStatus };
    else if (abort.grpcStatus !== undefined && GRPC_STATUS_CODES.has(abort.grpcStatus)) {
      errorType = { case: "grpcStatus", value: GRPC_STATUS_CODES.get(abort.grpcStatus) ?? 0 };
    }
    if (errorType.case !== undefined) {
      out.abort = create(fault.FaultAbortSchema, {
        errorType,
        percentage: abort.percentage !== undefined ? percentToFractional(abort.percentage.value ?? 0) : undefined,
      });
    }
  }
  return out.delay || out.abort ? out : undefined;
}
