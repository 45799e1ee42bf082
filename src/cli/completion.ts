// `sluice completion bash|zsh`: a shell script that completes sluice's commands and flags. The
// script asks sluice itself (yargs' --get-yargs-completions) for the words that may follow the ones
// typed, so it never goes stale as commands change, and the shell keeps those that start with the
// word being typed. SHELL is set on that call so yargs answers in the shell's format (zsh:
// "word:description").
import type { CommandModule } from "yargs";
import { EXIT_OK } from "./exit-codes.ts";

const SHELLS = ["bash", "zsh"] as const;
type Shell = (typeof SHELLS)[number];

interface CompletionArgs {
  shell: Shell;
}

const SCRIPTS: Record<Shell, string> = {
  bash: `# sluice completion for bash. Load it with: source <(sluice completion bash)
_sluice_completions() {
  local IFS=$'\\n'
  local words
  words=$(SHELL=bash sluice --get-yargs-completions "\${COMP_WORDS[@]:0:COMP_CWORD}" "" 2>/dev/null)
  COMPREPLY=($(compgen -W "$words" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _sluice_completions sluice
`,
  zsh: `#compdef sluice
# sluice completion for zsh. Load it with: source <(sluice completion zsh)
_sluice() {
  local -a candidates
  candidates=("\${(@f)$(SHELL=zsh sluice --get-yargs-completions "\${words[@]:0:$((CURRENT-1))}" "" 2>/dev/null)}")
  _describe 'sluice' candidates
}
compdef _sluice sluice
`,
};

/** The completion script for a shell. */
export function completionScript(shell: Shell): string {
  return SCRIPTS[shell];
}

export const completionCommand: CommandModule<object, CompletionArgs> = {
  command: "completion <shell>",
  describe: "Print a shell completion script (bash or zsh)",
  builder: (yargs) =>
    yargs
      .positional("shell", { choices: SHELLS, demandOption: true, describe: "The shell" })
      .example("source <($0 completion bash)", "Complete sluice in this bash session")
      .example("$0 completion zsh > ~/.zfunc/_sluice", "Install it for zsh (~/.zfunc on fpath)") as never,
  handler: (argv) => {
    process.stdout.write(completionScript(argv.shell));
    process.exitCode = EXIT_OK;
  },
};
