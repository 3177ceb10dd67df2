/** The page's stylesheet and icon, imported as text by assets.ts. */
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
