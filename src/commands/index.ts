import { configCommand } from "./config.ts";
import { doctorCommand } from "./doctor.ts";
import { expandCommand } from "./expand.ts";
import { hookCommand } from "./hook.ts";
import { importCommand } from "./import.ts";
import { indexCommand } from "./index-cmd.ts";
import { installCommand } from "./install.ts";
import { recentCommand, rememberCommand } from "./remember.ts";
import { resetCommand } from "./reset.ts";
import { searchCommand } from "./search.ts";
import { statsCommand } from "./stats.ts";
import { watchCommand } from "./watch.ts";
import { transcriptCommand } from "./transcript.ts";
import { recallCommand } from "./recall.ts";
import { hubCommand } from "./hub.ts";
import { projectsCommand } from "./projects.ts";
import { debugCommand } from "./debug.ts";
import { forgetCommand } from "./forget.ts";
import { uninstallCommand } from "./uninstall.ts";
import { completionCommand } from "./completion.ts";
import type { Described } from "./declare.ts";

/** Every subcommand; one file each. */
export const commands: readonly Described[] = [
  indexCommand, searchCommand, recallCommand, expandCommand, statsCommand, resetCommand, configCommand, watchCommand, transcriptCommand, importCommand, rememberCommand, recentCommand, hubCommand, projectsCommand, hookCommand, installCommand, uninstallCommand, doctorCommand, debugCommand, forgetCommand,
  // Completes every command above, itself included.
  completionCommand(() => commands),
];
