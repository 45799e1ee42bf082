// schema.ValidationAnalyzer.<Kind>: Istio's webhook rules (its ValidateConfig) on every object of one
// Istio kind. Errors become SchemaValidationError and warnings SchemaWarning, except VirtualService
// rules that can never match, which have their own codes.
import { type ConfigObject, lookupKind, type ValidationResult } from "../../config/index.ts";
import {
  DEFAULT_CONTEXT,
  Findings,
  findUnreachableRules,
  semanticValidator,
  type UnreachableRule,
  unreachableRuleMessage,
} from "../../config/validation/index.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { type Message, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, type Resource, specOf } from "../resource.ts";

// Istio's collections.Pilot, in its order; MeshNetworks and MeshConfig come last (see MESH_ANALYZERS).
const VALIDATED_KINDS = [
  K.AuthorizationPolicy,
  K.DestinationRule,
  K.EnvoyFilter,
  K.Gateway,
  K.PeerAuthentication,
  K.ProxyConfig,
  K.RequestAuthentication,
  K.ServiceEntry,
  K.Sidecar,
  K.Telemetry,
  K.TrafficExtension,
  K.VirtualService,
  K.WasmPlugin,
  K.WorkloadEntry,
  K.WorkloadGroup,
];

/**
 * Istio also registers schema analyzers for MeshNetworks and MeshConfig, whose validation is
 * EmptyValidate (a mesh config is validated when loaded, and an invalid one is not used): they report
 * nothing, and exist so that -L lists them and --analyzer can name them, as in istioctl.
 */
const MESH_ANALYZERS: readonly Analyzer[] = [K.MeshNetworks, K.MeshConfig].map((kind) => {
  const kindName = kind.slice(kind.indexOf("/") + 1);
  return {
    name: `schema.ValidationAnalyzer.${kindName}`,
    description: `Runs schema validation as an analyzer on '${kindName}' resources`,
    inputs: [kind],
    analyze() {},
  };
});

const kindAnalyzers: readonly Analyzer[] = VALIDATED_KINDS.map((kind) => {
  const kindName = kind.slice(kind.indexOf("/") + 1);
  return {
    name: `schema.ValidationAnalyzer.${kindName}`,
    description: `Runs schema validation as an analyzer on '${kindName}' resources`,
    inputs: [kind],
    analyze(ctx) {
      for (const r of ctx.list(kind)) for (const m of validationMessages(r)) ctx.report(m);
    },
  };
});

export const schemaValidationAnalyzers: readonly Analyzer[] = [...kindAnalyzers, ...MESH_ANALYZERS];

/**
 * What Istio's analyzer checks: `ValidateConfig` on the spec as decoded, with only the name and
 * namespace as metadata (no labels or annotations). Not the CRD's structural schema: istioctl never
 * applies it to files, and its decoder drops unknown fields (a value it cannot decode at all leaves
 * the document out, with a parse error).
 */
function validateConfig(object: ConfigObject): ValidationResult {
  const out = new Findings("");
  const info = lookupKind(object.apiVersion, object.kind);
  const { name, namespace } = object.metadata ?? {};
  const bare = { ...object, metadata: { name, namespace } } as ConfigObject;
  if (info) semanticValidator(info.group, info.kind)?.(bare, DEFAULT_CONTEXT, out.at("spec"));
  return out;
}

function validationMessages(r: Resource): Message[] {
  const result = validateConfig(r.object);
  const unreachable = r.kind === K.VirtualService ? virtualServiceUnreachable(r) : [];
  const unreachableTexts = new Set(unreachable.map(unreachableRuleMessage));
  return [
    ...result.errors.map((e) => newMessage(MESSAGES.SchemaValidationError, r, e.message)),
    ...result.warnings
      .filter((w) => !unreachableTexts.has(w.message))
      .map((w) => newMessage(MESSAGES.SchemaWarning, r, w.message)),
    ...unreachable.map((u) =>
      u.type === "VirtualServiceUnreachableRule"
        ? newMessage(MESSAGES.VirtualServiceUnreachableRule, r, u.rule, u.reason)
        : newMessage(MESSAGES.VirtualServiceIneffectiveMatch, r, u.rule, u.match, u.duplicateOf),
    ),
  ];
}

function virtualServiceUnreachable(r: Resource): UnreachableRule[] {
  const spec = specOf(r);
  return [
    ...findUnreachableRules("http", asArray(spec.http)),
    ...findUnreachableRules("tcp", asArray(spec.tcp)),
    ...findUnreachableRules("tls", asArray(spec.tls)),
  ];
}
