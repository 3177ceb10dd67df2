/**
 * The memory an agent curates for a project itself, which memsearch indexes as its own source and
 * never writes: Claude Code's memory folder and the project's CLAUDE.md files (claude/memory.ts).
 * Its own module, apart from the registry, because search and the prompt hook ask whether a curated
 * file came with the repository on every run and must not load the adapters for it.
 */
export { curatedFromRepository, findCuratedFiles as curatedFiles, type CuratedFile, type CuratedFiles, type CuratedKind } from "./claude/memory.ts";
