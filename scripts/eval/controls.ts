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
import { CONFIG_KEYS } from "../../src/core/config.ts";
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
  /** Every note the gate judged, in the search's order: what a perfect gate could choose from, and what another floor would pass. */
  judged: { turn: string; relevance: number }[];
}

export interface ControlTotals {
  negatives: number;
  negativesInjected: number;
  positives: number;
  positivesInjected: number;
  /** Positives whose injection held an evidence turn. */
  evidenceInjected: number;
  /** Positives for which a note the gate judged is of an evidence turn: the most a perfect gate could bring. */
  evidenceReachable: number;
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
    evidenceReachable: pos.filter((a) => a.judged.some((j) => a.evidence.includes(j.turn))).length,
    medianChars: median(injected.map((a) => a.chars)),
  };
}

/** What the prompt hook would inject for this prompt from this memory: turn ids and characters, and the notes its gate judged. */
export async function hookDecision(open: OpenMemsearch, prompt: string): Promise<{ injected: string[]; chars: number; judged: Asked["judged"] }> {
  if (isTrivialPrompt(prompt)) return { injected: [], chars: 0, judged: [] };
  const response = await open.respond(clip(prompt, PROMPT_CLIP), gateSearchDepth(open.config));
  const { injected, candidates } = gate(response, open.config);
  const judged = response.results.map((r, i) => ({ turn: r.chunk.heading, relevance: round4(candidates[i]!.relevance) }));
  if (!injected.length) return { injected: [], chars: 0, judged };
  return { injected: injected.map((r) => r.chunk.heading), chars: notesText(injected.map((r) => r.chunk), open.config["hooks.inject_max_chars"]).length, judged };
}

/**
 * The floors the eval sweeps the gate over (`hooks.inject_min_score`, default 0.5): the trade a
 * user can make between what the hook brings and the noise it adds, measured rather than assumed.
 */
export const SWEPT_FLOORS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

/** What the gate would pass at another floor: the first `topK` notes it judged at or over it (the hook's other rules, a note already given, the budget, left out). */
export function passedAt<T extends { relevance: number }>(judged: T[], floor: number, topK: number): T[] {
  return judged.filter((j) => j.relevance >= floor).slice(0, topK);
}

export const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** The hook's default number of injected notes, which the sweep keeps. */
export const SWEPT_TOP_K = CONFIG_KEYS["hooks.inject_top_k"].default;

/** A table with a column per swept floor. */
export function floorsTable<R extends { label: string }>(rows: R[], cell: (row: R, floor: number) => string): string {
  const head = [`| searcher | ${SWEPT_FLOORS.map((f) => `floor ${f}`).join(" | ")} |`, `| --- |${SWEPT_FLOORS.map(() => " ---: |").join("")}`];
  return [...head, ...rows.map((r) => `| ${r.label} | ${SWEPT_FLOORS.map((f) => cell(r, f)).join(" | ")} |`)].join("\n");
}

/** LoCoMo at each swept floor: evidence brought to positives, and negatives injected. */
export function controlsSweep(rows: ControlRow[]): string {
  return floorsTable(rows, ({ perQuestion }, f) => {
    const pos = perQuestion.filter((a) => a.positive);
    const neg = perQuestion.filter((a) => !a.positive);
    const brought = pos.filter((a) => passedAt(a.judged, f, SWEPT_TOP_K).some((j) => a.evidence.includes(j.turn))).length;
    const noisy = neg.filter((a) => passedAt(a.judged, f, SWEPT_TOP_K).length).length;
    return `${share(brought, pos.length)} / ${share(noisy, neg.length)}`;
  });
}

/** A percentage with one decimal. */
export const share = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)}%` : "–");

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
    "| searcher | injections on negatives | injections on positives | evidence among positives' injections | evidence reaches the prompt (of positives) | a perfect gate's most: the gate's candidates hold evidence | median characters per injection |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const { label, totals: t } of rows) {
    lines.push(`| ${label} | ${pct(t.negativesInjected, t.negatives)} | ${pct(t.positivesInjected, t.positives)} | ${pct(t.evidenceInjected, t.positivesInjected)} | ${pct(t.evidenceInjected, t.positives)} | ${pct(t.evidenceReachable, t.positives)} | ${t.medianChars} |`);
  }
  return lines.join("\n");
}
