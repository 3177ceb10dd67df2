/**
 * Negative controls for the prompt hook: every question of a conversation is asked as a prompt
 * against its own conversation's memory (a positive: the answer is there) and against each other
 * conversation's memory (a negative: other people, other lives; nothing there is relevant). Each
 * time the hook's own decision runs on the search's answer: the search the hook asks for
 * (gateSearchDepth), the gate it applies (src/recall/gate.ts), the text it would inject
 * (notesText), the same trivial-prompt rule. What is counted: whether anything was injected, its
 * characters, and whether an evidence turn was among the injected.
 *
 * Left out: the hook's fallback to past conversation turns when no note passes (it reads
 * ~/.memsearch/transcripts.sqlite, which the eval has none of); so an injection here is a note
 * injection.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { clip } from "../../src/core/text.ts";
import { gate, gateSearchDepth } from "../../src/recall/gate.ts";
import { notesText } from "../../src/recall/lines.ts";
import { isTrivialPrompt } from "../../src/transcript/turn-kind.ts";
import { memoryFiles, type Conversation } from "./dataset.ts";
import type { MemsearchSearcher, OpenMemsearch } from "./searchers.ts";

/** The hook clips a prompt to this before searching (user-prompt-submit.ts). */
const PROMPT_CLIP = 2000;

export interface Asked {
  conversation: string;
  /** Whose memory it was asked of. */
  memory: string;
  question: string;
  positive: boolean;
  evidence: string[];
  /** Turn ids injected, in order (empty: nothing injected). */
  injected: string[];
  chars: number;
}

export interface ControlTotals {
  negatives: number;
  negativesInjected: number;
  positives: number;
  positivesInjected: number;
  /** Positives whose injection held an evidence turn. */
  evidenceInjected: number;
  /** Median characters of an injection (all injections, positive and negative); 0 when none. */
  medianChars: number;
}

export interface ControlRow {
  name: string;
  label: string;
  totals: ControlTotals;
  perQuestion: Asked[];
}

export function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function totalsOf(asked: Asked[]): ControlTotals {
  const pos = asked.filter((a) => a.positive);
  const neg = asked.filter((a) => !a.positive);
  const injected = asked.filter((a) => a.injected.length);
  return {
    negatives: neg.length,
    negativesInjected: neg.filter((a) => a.injected.length).length,
    positives: pos.length,
    positivesInjected: pos.filter((a) => a.injected.length).length,
    evidenceInjected: pos.filter((a) => a.injected.some((id) => a.evidence.includes(id))).length,
    medianChars: median(injected.map((a) => a.chars)),
  };
}

/** What the prompt hook would inject for this prompt from this memory: turn ids and characters. */
export async function hookDecision(open: OpenMemsearch, prompt: string): Promise<{ injected: string[]; chars: number }> {
  if (isTrivialPrompt(prompt)) return { injected: [], chars: 0 };
  const response = await open.respond(clip(prompt, PROMPT_CLIP), gateSearchDepth(open.config));
  const { injected } = gate(response, open.config);
  if (!injected.length) return { injected: [], chars: 0 };
  return { injected: injected.map((r) => r.chunk.heading), chars: notesText(injected.map((r) => r.chunk), open.config["hooks.inject_max_chars"]).length };
}

export async function runControls(s: MemsearchSearcher, conversations: Conversation[], work: string, log: (l: string) => void): Promise<ControlRow> {
  const started = performance.now();
  const opened = new Map<string, OpenMemsearch>();
  const asked: Asked[] = [];
  try {
    for (const conv of conversations) opened.set(conv.id, await s.open(memoryFiles(conv), mkdtempSync(join(work, `${s.name}-controls-`))));
    for (const conv of conversations) {
      for (const q of conv.questions) {
        for (const memory of conversations) {
          const d = await hookDecision(opened.get(memory.id)!, q.question);
          asked.push({ conversation: conv.id, memory: memory.id, question: q.question, positive: memory.id === conv.id, evidence: q.evidence, ...d });
        }
      }
    }
  } finally {
    for (const o of opened.values()) o.close();
  }
  log(`  ${s.label}: ${asked.length} prompts against ${conversations.length} memories in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { name: s.name, label: s.label, totals: totalsOf(asked), perQuestion: asked };
}

const pct = (n: number, of: number) => (of ? `${n} / ${of} (${((100 * n) / of).toFixed(1)}%)` : "0 / 0");

export function controlsTable(rows: ControlRow[]): string {
  const lines = [
    "| searcher | injections on negatives | injections on positives | evidence among positives' injections | median characters per injection |",
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  for (const { label, totals: t } of rows) {
    lines.push(`| ${label} | ${pct(t.negativesInjected, t.negatives)} | ${pct(t.positivesInjected, t.positives)} | ${pct(t.evidenceInjected, t.positivesInjected)} | ${t.medianChars} |`);
  }
  return lines.join("\n");
}
