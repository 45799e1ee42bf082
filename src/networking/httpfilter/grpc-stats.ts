// envoy.filters.http.grpc_stats: per-call gRPC status in filter state, for Istio's metrics.
import { create } from "@bufbuild/protobuf";
import { BoolValueSchema } from "@bufbuild/protobuf/wkt";
import { grpcStats as grpcStatsApi } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const filter = typedHttpFilter(
  "envoy.filters.http.grpc_stats",
  grpcStatsApi.FilterConfigSchema,
  create(grpcStatsApi.FilterConfigSchema, {
    emitFilterState: true,
    perMethodStatSpecifier: { case: "statsForAllMethods", value: create(BoolValueSchema, { value: false }) },
  }),
);

export const grpcStats: HttpFilterPlugin = { name: "envoy.filters.http.grpc_stats", httpFilters: () => [filter] };
