export { DEFAULT_MAX_FILE_BYTES, FileSource, type FileSourceOptions } from "./source.ts";
export { type TextFileWatch, watchTextFile } from "./text-file.ts";
