// envoy.filters.http.grpc_web: only on ports declared GRPC-Web.
import { create } from "@bufbuild/protobuf";
import { grpcWeb as grpcWebApi } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const filter = typedHttpFilter(
  "envoy.filters.http.grpc_web",
  grpcWebApi.GrpcWebSchema,
  create(grpcWebApi.GrpcWebSchema),
);

export const grpcWeb: HttpFilterPlugin = {
  name: "envoy.filters.http.grpc_web",
  httpFilters: (context) => (context.protocol === "GRPC-Web" ? [filter] : []),
};
