// VirtualService `headers` (request/response set, add, remove) → Envoy header operations (Istio
// route.go TranslateHeadersOperations). `set` overwrites, `add` appends; each group sorted by key, set
// first. Pseudo-headers (`:x`) and `host` are never emitted: `:authority`/`host` become a host rewrite.
import { create } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";
import type { VirtualServiceHttpHeaders } from "../../config/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";

export interface HeaderOperations {
  requestHeadersToAdd: core.HeaderValueOption[];
  responseHeadersToAdd: core.HeaderValueOption[];
  requestHeadersToRemove: string[];
  responseHeadersToRemove: string[];
  /** The request's `:authority`/`host` value to rewrite to ("" when none is set). */
  authority: string;
}

function isInternalHeader(key: string): boolean {
  return key.startsWith(":") || key.toLowerCase() === "host";
}

function isAuthorityHeader(key: string): boolean {
  const k = key.toLowerCase();
  return k === ":authority" || k === "host";
}

function headerOptions(
  headers: Record<string, string> | undefined,
  append: boolean,
): { options: core.HeaderValueOption[]; authority: string } {
  let authority = "";
  const options: core.HeaderValueOption[] = [];
  const entries = Object.entries(headers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, value] of entries) {
    if (isAuthorityHeader(key)) authority = value;
    if (isInternalHeader(key)) continue;
    options.push(
      create(core.HeaderValueOptionSchema, {
        header: { key, value },
        appendAction: append
          ? core.HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD
          : core.HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
      }),
    );
  }
  return { options, authority };
}

/**
 * `alt-svc: h3=":<port>"; ma=86400` (Istio's buildHTTP3AltSvcHeader, a day's max age), appended to the
 * response: HTTP/3 over QUIC is served on the same port.
 */
export function http3AltSvcHeader(port: number): core.HeaderValueOption {
  return create(core.HeaderValueOptionSchema, {
    header: { key: "alt-svc", value: `h3=":${port}"; ma=86400` },
    appendAction: core.HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD,
  });
}

// The operations of each headers object (kept by the per-push copies of a VirtualService), for
// every route and push that uses it.
const HEADER_OPERATIONS = weakTable<VirtualServiceHttpHeaders, HeaderOperations>("route/headerOperations");

/** The header operations of `headers`, shared: never change the result or its lists. */
export function translateHeaderOperations(memos: Memos, headers: VirtualServiceHttpHeaders): HeaderOperations {
  const translated = memos.weak(HEADER_OPERATIONS);
  let ops = translated.get(headers);
  if (!ops) {
    ops = buildHeaderOperations(headers);
    translated.set(headers, ops);
  }
  return ops;
}

function buildHeaderOperations(headers: VirtualServiceHttpHeaders): HeaderOperations {
  const reqSet = headerOptions(headers.request?.set, false);
  const reqAdd = headerOptions(headers.request?.add, true);
  const respSet = headerOptions(headers.response?.set, false);
  const respAdd = headerOptions(headers.response?.add, true);
  return {
    requestHeadersToAdd: [...reqSet.options, ...reqAdd.options],
    responseHeadersToAdd: [...respSet.options, ...respAdd.options],
    requestHeadersToRemove: (headers.request?.remove ?? []).filter((k) => !isInternalHeader(k)),
    responseHeadersToRemove: (headers.response?.remove ?? []).filter((k) => !isInternalHeader(k)),
    // `set` wins over `add` when both name the authority.
    authority: reqSet.authority !== "" ? reqSet.authority : reqAdd.authority,
  };
}
