// What a config path may name, shared by the decoder and by commands that take paths: a separate
// module so that a command's flags and help do not load the YAML parser.

/** The path that means standard input, as in kubectl and istioctl. */
export const STDIN_PATH = "-";

/** Extensions a directory walk picks up. A file named explicitly is read whatever its extension. */
export const CONFIG_FILE_EXTENSIONS: readonly string[] = [".yaml", ".yml", ".json"];
