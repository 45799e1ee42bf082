// The version /version and pilot_info report: the package's, read once from package.json.
import { readFileSync } from "node:fs";

export const SLUICE_VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
