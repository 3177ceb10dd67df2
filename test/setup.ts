import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Tests never touch the real home: ~/.memsearch and ~ point into a temp dir.
const home = mkdtempSync(join(tmpdir(), "memsearch-home-"));
process.env.HOME = home;
process.env.MEMSEARCH_HOME = join(home, ".memsearch");
// No real Ollama on test machines; anything that forgets to set a host hits a closed port.
process.env.OLLAMA_HOST = "http://127.0.0.1:9";
delete process.env.MEMSEARCH_DIR;
delete process.env.CLAUDE_PROJECT_DIR;
