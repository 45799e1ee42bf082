// envoy.filters.http.stateful_session (Istio's PILOT_ENABLE_PERSISTENT_SESSION_FILTER, off by default):
// an empty filter on outbound and gateway connection managers, configured per virtual host or route for
// services labelled `istio.io/persistent-session: <cookie>[:<path>]` (a session cookie) or
// `istio.io/persistent-session-header: <header>` (Istio's MaybeBuildStatefulSessionFilterConfig).
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { cookieSessionState, headerSessionState, packAny, statefulSession } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const STATEFUL_SESSION_FILTER = "envoy.filters.http.stateful_session";
export const PERSISTENT_SESSION_LABEL = "istio.io/persistent-session";
export const PERSISTENT_SESSION_HEADER_LABEL = "istio.io/persistent-session-header";

const emptyFilter = typedHttpFilter(
  STATEFUL_SESSION_FILTER,
  statefulSession.StatefulSessionSchema,
  create(statefulSession.StatefulSessionSchema),
);

export const statefulSessionFilter: HttpFilterPlugin = {
  name: STATEFUL_SESSION_FILTER,
  httpFilters: (context) =>
    context.persistentSessions && context.listenerClass !== "sidecarInbound" ? [emptyFilter] : [],
};

/** The session a service's labels ask for; the cookie (path `/` by default, no TTL) wins over the header. */
export function statefulSessionConfig(
  labels: Readonly<Record<string, string>>,
): statefulSession.StatefulSession | undefined {
  const cookie = labels[PERSISTENT_SESSION_LABEL] ?? "";
  const header = labels[PERSISTENT_SESSION_HEADER_LABEL] ?? "";
  if (cookie !== "") {
    const colon = cookie.indexOf(":");
    const name = colon < 0 ? cookie : cookie.slice(0, colon);
    const path = colon < 0 ? "/" : cookie.slice(colon + 1);
    const state = create(cookieSessionState.CookieBasedSessionStateSchema, { cookie: { name, path } });
    return create(statefulSession.StatefulSessionSchema, {
      sessionState: {
        name: "envoy.http.stateful_session.cookie",
        typedConfig: packAny(cookieSessionState.CookieBasedSessionStateSchema, state),
      },
    });
  }
  if (header !== "") {
    const state = create(headerSessionState.HeaderBasedSessionStateSchema, { name: header });
    return create(statefulSession.StatefulSessionSchema, {
      sessionState: {
        name: "envoy.http.stateful_session.header",
        typedConfig: packAny(headerSessionState.HeaderBasedSessionStateSchema, state),
      },
    });
  }
  return undefined;
}

/** The per-virtual-host or per-route override carrying a session config. */
export function statefulSessionPerRoute(config: statefulSession.StatefulSession): Any {
  return packAny(
    statefulSession.StatefulSessionPerRouteSchema,
    create(statefulSession.StatefulSessionPerRouteSchema, { override: { case: "statefulSession", value: config } }),
  );
}
