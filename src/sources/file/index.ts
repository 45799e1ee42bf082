export { DEFAULT_MAX_FILE_BYTES, FileSource, type FileSourceOptions } from "./source.ts";
