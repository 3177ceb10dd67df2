/** Damage the tests make to an index file on purpose, its checksums made to agree again. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sealHead, type Head } from "../../src/index/format.ts";
import { INDEX_FILE } from "../../src/index/store.ts";

/** Change bytes of the documents section of the index in `dir`; its checksum and the head are sealed again. */
export function patchDocs(dir: string, patch: (section: Buffer) => void): void {
  const path = join(dir, INDEX_FILE);
  const bytes = readFileSync(path);
  const space = bytes.readUInt32LE(16);
  const head = JSON.parse(bytes.subarray(20, 20 + space).toString()) as Head;
  const i = head.kinds.indexOf("docs");
  let at = 20 + space + head.layoutBytes;
  for (let k = 0; k < i; k++) at += head.sections[k]!;
  const section = bytes.subarray(at, at + head.sections[i]!);
  patch(section);
  head.crc.sections[i] = Bun.hash.crc32(section);
  bytes.fill(0x20, 20, 20 + space);
  Buffer.from(sealHead(head)).copy(bytes, 20);
  writeFileSync(path, bytes);
}
