// envoy.filters.http.router: sends the request upstream. Always the last filter of the chain.
import { create } from "@bufbuild/protobuf";
import { router as routerApi } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const ROUTER_FILTER = "envoy.filters.http.router";

/** The router with nothing set: what Istio's BuildRouterFilter gives without child spans or suppressed debug headers. */
export const ROUTER_HTTP_FILTER = typedHttpFilter(
  ROUTER_FILTER,
  routerApi.RouterSchema,
  create(routerApi.RouterSchema),
);

export const router: HttpFilterPlugin = { name: ROUTER_FILTER, httpFilters: () => [ROUTER_HTTP_FILTER] };
