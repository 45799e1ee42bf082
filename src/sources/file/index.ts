export { FileSource, type FileSourceOptions } from "./source.ts";
