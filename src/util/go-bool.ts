// Go's strconv.ParseBool, which Istio reads every boolean string with (annotations, node metadata,
// environment flags): "1", "t", "T", "TRUE", "true", "True" are true; "0", "f", "F", "FALSE", "false",
// "False" are false; anything else is invalid.

/** Go's strconv.ParseBool: the boolean `value` spells, or undefined when it spells none. */
export function parseGoBool(value: string): boolean | undefined {
  switch (value) {
    case "1":
    case "t":
    case "T":
    case "TRUE":
    case "true":
    case "True":
      return true;
    case "0":
    case "f":
    case "F":
    case "FALSE":
    case "false":
    case "False":
      return false;
    default:
      return undefined;
  }
}

/** A boolean environment setting as istiod's env.Register reads it: unset or unparsable keeps `fallback`. */
export function envBool(env: Readonly<Record<string, string | undefined>>, name: string, fallback: boolean): boolean {
  return parseGoBool(env[name] ?? "") ?? fallback;
}
