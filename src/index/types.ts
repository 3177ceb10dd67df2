/** A piece of a markdown file, as the chunker produces it. */
export interface Chunk {
  /** Section text, stripped; heading line and comments kept. */
  content: string;
  /** Absolute path of the markdown file. */
  source: string;
  /** Heading text of the section ("" for a preamble). */
  heading: string;
  /** 1–6, 0 for a preamble. */
  headingLevel: number;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** sha256(content)[:16] */
  contentHash: string;
}

/** A chunk as stored and returned by search. */
export interface StoredChunk extends Chunk {
  /** sha256("markdown:{source}:{start}:{end}:{content_hash}:{model}")[:16] */
  chunkHash: string;
}
