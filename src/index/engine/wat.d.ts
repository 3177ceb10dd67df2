/** A `.wat` import: its module's bytes, assembled at build time, as base64 (scripts/wat.ts). */
declare module "*.wat" {
  const base64: string;
  export default base64;
}
