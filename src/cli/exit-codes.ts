// Exit codes every sluice command uses, as istioctl and kubectl: 0 success, 1 the input or the
// checked state is bad, 2 the command could not run as asked (usage error, unreadable path).
export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
/**
 * `analyze` found messages at or above its failure threshold: istioctl's ExitAnalyzerFoundIssues,
 * kept so CI scripts written for `istioctl analyze` work unchanged (not an error running the command).
 */
export const EXIT_ANALYZER_FOUND_ISSUES = 79;
