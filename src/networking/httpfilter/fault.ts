// envoy.filters.http.fault: empty here; VirtualService fault injection configures it per route.
import { create } from "@bufbuild/protobuf";
import { fault as faultApi } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const filter = typedHttpFilter("envoy.filters.http.fault", faultApi.HTTPFaultSchema, create(faultApi.HTTPFaultSchema));

export const fault: HttpFilterPlugin = { name: "envoy.filters.http.fault", httpFilters: () => [filter] };
