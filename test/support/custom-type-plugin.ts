// A third-party generator plugin: serves one resource of a custom type URL to any proxy, named
// after the proxy so a test can see the plugin ran for that connection.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import type { GeneratorRegistry } from "../../src/xds/index.ts";

export const CUSTOM_TYPE = "type.googleapis.com/example.plugin.v1.Greeting";

export default function register(registry: GeneratorRegistry): void {
  registry.register(CUSTOM_TYPE, {
    generate(proxy) {
      const greeting = `hello ${proxy.id}`;
      return {
        resources: [
          {
            name: `greeting/${proxy.id}`,
            resource: create(AnySchema, { typeUrl: CUSTOM_TYPE, value: new TextEncoder().encode(greeting) }),
          },
        ],
      };
    },
  });
}
