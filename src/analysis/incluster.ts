// istiod's in-cluster analysis (pkg/config/analysis/incluster): every analyzer over the control
// plane's config, in all namespaces, with Istio's default mesh config and networks (istiod's analyzer
// never reads the mesh's own) and no assumed ingress gateway; each message about an object becomes
// the AnalysisMessageBase istiod writes into that object's `status.validationMessages`.
import { type ConfigObject, loadMeshConfig } from "../config/index.ts";
import type { Analyzer } from "./analyzer.ts";
import { K } from "./kinds.ts";
import type { Level } from "./message.ts";
import { CONFIG_ANALYSIS_URL } from "./output.ts";
import { ALL_ANALYZERS } from "./registry.ts";
import { runAnalysis } from "./run.ts";

/** Istio's AnalysisMessageBase as jsonpb writes it: the level's enum name, the code alone as type. */
export interface StatusMessage {
  documentationUrl: string;
  level: "ERROR" | "WARNING" | "INFO";
  type: { code: string };
}

/** One message about one of the analyzed objects. */
export interface StatusFinding {
  object: ConfigObject;
  message: StatusMessage;
}

const LEVEL_NAMES: Readonly<Record<Level, StatusMessage["level"]>> = {
  Error: "ERROR",
  Warning: "WARNING",
  Info: "INFO",
};

export interface InClusterAnalysis {
  /** The kinds the analyzers read (`group/Kind`). */
  readonly kinds: ReadonlySet<string>;
  analyze(objects: readonly ConfigObject[]): StatusFinding[];
}

/**
 * The analysis over objects of the kinds in `available` (what the caller's store holds): analyzers
 * that read another kind are skipped, as istiod skips those whose kinds no store serves.
 */
export function inClusterAnalysis(available: ReadonlySet<string>, istioNamespace: string): InClusterAnalysis {
  const provided = new Set([...available, K.MeshConfig, K.MeshNetworks]);
  const analyzers: Analyzer[] = ALL_ANALYZERS.filter((a) => a.inputs.every((kind) => provided.has(kind)));
  const mesh = loadMeshConfig().mesh;
  return {
    kinds: new Set(analyzers.flatMap((a) => a.inputs)),
    analyze(objects) {
      const messages = runAnalysis(
        objects.map((object) => ({ object })),
        { analyzers, mesh, namespace: "", istioNamespace, defaultResources: false },
      );
      return messages.flatMap((m) =>
        m.resource
          ? [
              {
                object: m.resource.object,
                message: {
                  // istiod sets no doc reference (istioctl's ?ref=istioctl-analyze).
                  documentationUrl: `${CONFIG_ANALYSIS_URL}/${m.type.code.toLowerCase()}/`,
                  level: LEVEL_NAMES[m.type.level],
                  type: { code: m.type.code },
                },
              },
            ]
          : [],
      );
    },
  };
}
