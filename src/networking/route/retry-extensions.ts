// The two retry extensions Istio configures, whose protos src/api does not generate yet:
// envoy.retry_host_predicates.previous_hosts (PreviousHostsPredicate, an empty message) and
// envoy.retry_priorities.previous_priorities (PreviousPrioritiesConfig {int32 update_frequency = 1}).
// Their descriptors are declared here, from the Envoy proto definitions, so the Anys that carry them
// encode, render as JSON and pass the constraint checker. Once src/api generates
// envoy/extensions/retry/{host/previous_hosts,priority/previous_priorities}/v3, those are used (and
// this file can go).
import { create, createFileRegistry, createRegistry, type Message, type Registry } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { registry as apiRegistry } from "../../api/index.ts";

/** The message from src/api when it is generated there, else declared here from its fields. */
function messageFile(pkg: string, file: string, message: string, fields: { name: string; jsonName: string }[]) {
  const typeName = `${pkg}.${message}`;
  const generated = apiRegistry.getMessage(typeName);
  if (generated) return { files: createRegistry(generated), desc: generated };
  const files = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: `${pkg.replaceAll(".", "/")}/${file}`,
      package: pkg,
      syntax: "proto3",
      messageType: [
        {
          name: message,
          field: fields.map((f, i) => ({
            name: f.name,
            jsonName: f.jsonName,
            number: i + 1,
            type: FieldDescriptorProto_Type.INT32,
            label: FieldDescriptorProto_Label.OPTIONAL,
          })),
        },
      ],
    }),
    () => undefined,
  );
  const desc = files.getMessage(typeName);
  if (!desc) throw new Error(`retry-extensions: ${message} not declared`);
  return { files, desc };
}

const previousHosts = messageFile(
  "envoy.extensions.retry.host.previous_hosts.v3",
  "previous_hosts.proto",
  "PreviousHostsPredicate",
  [],
);
const previousPriorities = messageFile(
  "envoy.extensions.retry.priority.previous_priorities.v3",
  "previous_priorities.proto",
  "PreviousPrioritiesConfig",
  [{ name: "update_frequency", jsonName: "updateFrequency" }],
);

export type PreviousHostsPredicate = Message<"envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate">;
export type PreviousPrioritiesConfig =
  Message<"envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig"> & {
    updateFrequency: number;
  };

// Typed as generated code types its descriptors.
export const PreviousHostsPredicateSchema = previousHosts.desc as GenMessage<PreviousHostsPredicate>;
export const PreviousPrioritiesConfigSchema = previousPriorities.desc as GenMessage<PreviousPrioritiesConfig>;

/** The API registry plus the two retry extensions: use it to render or check routes as JSON. */
export const routeRegistry: Registry = createRegistry(apiRegistry, previousHosts.files, previousPriorities.files);
