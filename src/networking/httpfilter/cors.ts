// envoy.filters.http.cors: empty here; VirtualService corsPolicy configures it per route.
import { create } from "@bufbuild/protobuf";
import { cors as corsApi } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const filter = typedHttpFilter("envoy.filters.http.cors", corsApi.CorsSchema, create(corsApi.CorsSchema));

export const cors: HttpFilterPlugin = { name: "envoy.filters.http.cors", httpFilters: () => [filter] };
