import * as v from "valibot";
import { errCode, readOwnText } from "./fsutil.ts";

/**
 * JSON that memsearch wrote and reads back (queue entries, session files, the projects registry,
 * the conversation listing, the hub's record, the watch PID file): parsed and checked against a
 * schema in one step, so none of it is ever cast. Anyone may have edited, cut or replaced such a
 * file since, so a bad one is an answer (`problem`), never an exception.
 */
export type JsonRead<T> = { value: T } | { missing: true } | { problem: string };

/** `text` as JSON of `schema`'s shape, or what is wrong with it, in a few words. */
export function parseJson<S extends v.GenericSchema>(text: string, schema: S): { value: v.InferOutput<S> } | { problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { problem: `not valid JSON (${(e as Error).message})` };
  }
  const r = v.safeParse(schema, raw);
  if (r.success) return { value: r.output };
  const issue = r.issues[0];
  const where = issue.path?.map((p) => String(p.key)).join(".");
  return { problem: `${where ? `${where}: ` : ""}${issue.message}` };
}

/** The file at `path` as JSON of `schema`'s shape; `missing` only when there is no such file. Never read through a link. */
export function readJson<S extends v.GenericSchema>(path: string, schema: S): JsonRead<v.InferOutput<S>> {
  let text: string;
  try {
    text = readOwnText(path);
  } catch (e) {
    return errCode(e) === "ENOENT" ? { missing: true } : { problem: `cannot be read (${errCode(e) ?? "error"})` };
  }
  return parseJson(text, schema);
}

/** readJson for callers to whom a missing and a bad file are the same: nothing usable. */
export function readJsonFile<S extends v.GenericSchema>(path: string, schema: S): v.InferOutput<S> | undefined {
  const r = readJson(path, schema);
  return "value" in r ? r.value : undefined;
}
