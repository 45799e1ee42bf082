// The -f/--filename option every command that reads config files shares (kubectl's and istioctl's).
import { CONFIG_FILE_EXTENSIONS, STDIN_PATH } from "../config/decode-paths.ts";

/**
 * `purpose` completes "Name the files to … with -f/--filename." Unless `required`, the option is a list
 * that may be empty.
 */
export function filenameOption(purpose: string, required = true) {
  return {
    alias: "f",
    // Not `array: true`: yargs would not take "-" (stdin) as an array element. Repeating the flag
    // still collects every value; coerce makes a single one a list too.
    type: "string",
    coerce: (value: string | string[]): string[] => [value].flat(),
    requiresArg: true,
    ...(required ? { demandOption: `Name the files to ${purpose} with -f/--filename.` } : { default: [] as string[] }),
    describe: `File or directory to read (directories: every ${CONFIG_FILE_EXTENSIONS.join(", ")} below, recursively; "${STDIN_PATH}": standard input). Repeatable.`,
  } as const;
}
