// The push pipeline: config store changes → debounce → push context → xDS pushes.
export { type ClassifiedChanges, classifyEvents, type InboundType } from "./classify.ts";
export {
  type Clock,
  DEFAULT_DEBOUNCE,
  type DebouncedPush,
  type DebounceOptions,
  Debouncer,
  systemClock,
} from "./debounce.ts";
export { PipelineMetrics } from "./metrics.ts";
export {
  type ChangeSource,
  type PushContextBuilder,
  PushPipeline,
  type PushPipelineOptions,
  type PushTarget,
} from "./pipeline.ts";
