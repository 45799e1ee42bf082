// Logging shared by the programs: Istio's --log_output_level scopes over pino loggers.
export {
  NO_OUTPUT_LEVELS,
  OUTPUT_LEVELS,
  type OutputLevel,
  type OutputLevels,
  parseOutputLevels,
  pinoLevel,
  scopedLogger,
  scopeLevel,
} from "./output-level.ts";
export { LogScopes, type ScopeInfo } from "./scopes.ts";
