// How a command reports what went wrong doing its work. Light (it imports nothing), so a command's
// handler can wrap the work it loads on demand.

/**
 * An error a command reports as one line (sluice prints the stack only of errors without a code,
 * which are bugs): for what the user or the control plane got wrong.
 */
export class CommandError extends Error {
  readonly code = "ESLUICE_COMMAND";
}

/** Runs a command's work, its failures reported as one-line CommandErrors. */
export async function reportingFailures(work: () => Promise<void> | void): Promise<void> {
  try {
    await work();
  } catch (err) {
    throw err instanceof Error && !(err instanceof TypeError) && !(err instanceof RangeError)
      ? new CommandError(err.message)
      : err;
  }
}

/**
 * Runs a command's work as istioctl runs its commands: a failure is printed as `Error: <message>`
 * and exits 1 (the work could not be done as asked), whatever failed.
 */
export async function exitOneOnFailure(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError) throw err;
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}

/** Several failures as Go's multierror prints them (`2 errors occurred:` and a `\t* ` line each). */
export function multiError(failures: readonly string[]): Error {
  const count = failures.length === 1 ? "1 error occurred" : `${failures.length} errors occurred`;
  return new Error(`${count}:\n${failures.map((f) => `\t* ${f}`).join("\n")}\n\n`);
}
