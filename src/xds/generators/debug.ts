// The `istio.io/debug` generator (Istio's DebugGen): the single resource name is a debug path
// (`configz`, `config_dump?proxyID=...`), answered by the debug endpoint of that name and sent
// as an Any of type `istio.io/debug` holding the response body.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { XdsError } from "../errors.ts";
import type { Generator } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { checkDebugEndpoint, type DebugAuthOptions, requireVerifiedCaller, restrictedNamespace } from "./debug-auth.ts";
import { type DebugEndpoints, parseDebugPath } from "./debug-endpoints.ts";

export function debugGenerator(endpoints: DebugEndpoints, auth: DebugAuthOptions): Generator {
  return {
    generate(proxy, watched) {
      const namespace = requireVerifiedCaller(proxy);
      if (watched.wildcard || watched.resourceNames.size !== 1) {
        throw new XdsError(status.INVALID_ARGUMENT, "exactly one debug request is required");
      }
      const [path] = watched.resourceNames;
      const restrictedTo = restrictedNamespace(namespace, auth);
      checkDebugEndpoint(parseDebugPath(path).name, restrictedTo);
      const value = endpoints.serve(path, restrictedTo);
      return { resources: [{ name: path, resource: create(AnySchema, { typeUrl: TypeUrl.Debug, value }) }] };
    },
  };
}
