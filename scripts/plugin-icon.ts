/**
 * The plugin's icon: a memory note under a magnifying glass, drawn from one list of shapes into
 * docs/icon.svg and plugin/.claude-plugin/icon.png, the file plugin.json's `icon` names (the plugin
 * directory wants a square PNG of 512 to 2048 px and accepts no SVG, so the SVG stays outside
 * plugin/, where the validator would otherwise count it as the icon).
 *
 * No image library: the PNG is rasterised here (4×4 supersampling of each shape's distance function)
 * and encoded by hand (RGBA, 8 bits, one deflated IDAT). The same input gives byte-identical files.
 *
 *   bun scripts/plugin-icon.ts            write both files
 *   bun scripts/plugin-icon.ts --check    exit 1 if either file differs from what would be written
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync } from "node:zlib";

export const SIZE = 512;
const PLUGIN = join(import.meta.dir, "..", "plugin");
export const SVG_PATH = join(import.meta.dir, "..", "docs", "icon.svg");
export const PNG_PATH = join(PLUGIN, ".claude-plugin", "icon.png");

type Rgba = readonly [number, number, number, number];
type Shape =
  | { kind: "rect"; x: number; y: number; w: number; h: number; r: number; fill: Rgba }
  | { kind: "ring"; cx: number; cy: number; r: number; width: number; stroke: Rgba; fill?: Rgba }
  | { kind: "line"; x1: number; y1: number; x2: number; y2: number; width: number; stroke: Rgba };

const rgb = (hex: string, a = 1): Rgba => [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16), a];
const NAVY = rgb("#1d3557");
const PAPER = rgb("#f4efe4");
const INK = rgb("#1d3557");
const FADED = rgb("#a8b8cc");
const AMBER = rgb("#f2a93b");
const LENS = rgb("#ffffff", 0.3);

/** Back to front, in a 512 × 512 box. */
export const SHAPES: Shape[] = [
  { kind: "rect", x: 0, y: 0, w: 512, h: 512, r: 112, fill: NAVY },
  // A dated note: a heading and three bullet lines.
  { kind: "rect", x: 96, y: 80, w: 240, h: 304, r: 28, fill: PAPER },
  { kind: "line", x1: 140, y1: 140, x2: 232, y2: 140, width: 24, stroke: INK },
  { kind: "line", x1: 140, y1: 196, x2: 292, y2: 196, width: 18, stroke: FADED },
  { kind: "line", x1: 140, y1: 244, x2: 272, y2: 244, width: 18, stroke: FADED },
  { kind: "line", x1: 140, y1: 292, x2: 212, y2: 292, width: 18, stroke: FADED },
  // The search: a lens over the note's corner, handle to the bottom right.
  { kind: "line", x1: 384, y1: 384, x2: 432, y2: 432, width: 48, stroke: AMBER }, // starts under the ring: no cap shows through the lens
  { kind: "ring", cx: 316, cy: 316, r: 84, width: 34, stroke: AMBER, fill: LENS },
];

// ---------------------------------------------------------------------------------------------
// SVG

const color = ([r, g, b]: Rgba) => `#${[r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("")}`;
const opacity = (c: Rgba, attr: string) => (c[3] < 1 ? ` ${attr}-opacity="${c[3]}"` : "");

export function svg(): string {
  const body = SHAPES.map((s) => {
    switch (s.kind) {
      case "rect":
        return `  <rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" rx="${s.r}" fill="${color(s.fill)}"${opacity(s.fill, "fill")}/>`;
      case "line":
        return `  <line x1="${s.x1}" y1="${s.y1}" x2="${s.x2}" y2="${s.y2}" stroke="${color(s.stroke)}"${opacity(s.stroke, "stroke")} stroke-width="${s.width}" stroke-linecap="round"/>`;
      case "ring": {
        const fill = s.fill ? `fill="${color(s.fill)}"${opacity(s.fill, "fill")}` : `fill="none"`;
        return `  <circle cx="${s.cx}" cy="${s.cy}" r="${s.r}" ${fill} stroke="${color(s.stroke)}"${opacity(s.stroke, "stroke")} stroke-width="${s.width}"/>`;
      }
    }
  });
  return [`<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">`, "  <title>memsearch</title>", ...body, "</svg>", ""].join("\n");
}

// ---------------------------------------------------------------------------------------------
// Raster

/** Paint of shape `s` at point (x, y): its colour, or undefined where it does not cover. */
function paintAt(s: Shape, x: number, y: number): Rgba | undefined {
  switch (s.kind) {
    case "rect": {
      const qx = Math.abs(x - (s.x + s.w / 2)) - (s.w / 2 - s.r);
      const qy = Math.abs(y - (s.y + s.h / 2)) - (s.h / 2 - s.r);
      const d = Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - s.r;
      return d <= 0 ? s.fill : undefined;
    }
    case "line": {
      const [dx, dy] = [s.x2 - s.x1, s.y2 - s.y1];
      const t = Math.max(0, Math.min(1, ((x - s.x1) * dx + (y - s.y1) * dy) / (dx * dx + dy * dy)));
      return Math.hypot(x - (s.x1 + t * dx), y - (s.y1 + t * dy)) <= s.width / 2 ? s.stroke : undefined;
    }
    case "ring": {
      const d = Math.hypot(x - s.cx, y - s.cy);
      if (Math.abs(d - s.r) <= s.width / 2) return s.stroke;
      return d < s.r && s.fill ? s.fill : undefined;
    }
  }
}

/** RGBA pixels, `size` × `size`, each the average of 4×4 samples composited back to front. */
export function rasterise(size = SIZE, samples = 4): Uint8Array {
  const out = new Uint8Array(size * size * 4);
  const scale = SIZE / size;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let [r, g, b, a] = [0, 0, 0, 0]; // premultiplied sums
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          const x = (px + (sx + 0.5) / samples) * scale;
          const y = (py + (sy + 0.5) / samples) * scale;
          let [cr, cg, cb, ca] = [0, 0, 0, 0];
          for (const s of SHAPES) {
            const p = paintAt(s, x, y);
            if (!p) continue;
            const k = 1 - p[3];
            [cr, cg, cb, ca] = [p[0] * p[3] + cr * k, p[1] * p[3] + cg * k, p[2] * p[3] + cb * k, p[3] + ca * k];
          }
          [r, g, b, a] = [r + cr, g + cg, b + cb, a + ca];
        }
      }
      const i = (py * size + px) * 4;
      const n = samples * samples;
      out[i + 3] = Math.round((a / n) * 255);
      if (a > 0) [out[i], out[i + 1], out[i + 2]] = [Math.round(r / a), Math.round(g / a), Math.round(b / a)];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// PNG

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit RGBA PNG of `rgba` (width × height × 4 bytes). */
export function encodePng(rgba: Uint8Array, width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // bit depth 8, colour type RGBA, deflate, no filter method, no interlace
  const raw = Buffer.alloc(height * (width * 4 + 1));
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * (width * 4 + 1) + 1);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", new Uint8Array())]);
}

export function png(): Buffer {
  return encodePng(rasterise(), SIZE, SIZE);
}

if (import.meta.main) {
  const files: [string, string | Buffer][] = [
    [SVG_PATH, svg()],
    [PNG_PATH, png()],
  ];
  if (process.argv.includes("--check")) {
    const stale = files.filter(([p, data]) => !existsSync(p) || !readFileSync(p).equals(Buffer.from(data)));
    for (const [p] of stale) console.error(`out of date: ${p} (run bun scripts/plugin-icon.ts)`);
    process.exit(stale.length ? 1 : 0);
  }
  for (const [p, data] of files) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, data);
    console.log(`wrote ${p} (${Buffer.byteLength(data)} bytes)`);
  }
}
