export * from "./kinds.ts";
export * from "./model.ts";
export { objectRef, validateObject } from "./validate.ts";
export { DEFAULT_CONTEXT, Findings, type ValidationContext } from "./validation/index.ts";
