// HTTP filters of the HTTP connection manager: one file per filter, one ordered registry, router last.

export * from "./extension-types.ts";
export { envoyViolations } from "./pgv.ts";
export { buildHttpFilters, HTTP_FILTERS } from "./registry.ts";
export { ROUTER_FILTER } from "./router.ts";
export { typedStruct } from "./typed.ts";
export type { HttpFilterContext, HttpFilterPlugin, ListenerClass } from "./types.ts";
