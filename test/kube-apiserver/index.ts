export { type IssuedToken, KubeTestServer, type KubeTestServerOptions, type RecordedRequest } from "./server.ts";
export { ApiError } from "./store.ts";
