/** The plugin's files, which plugin-files.ts imports as text (and the icon as an embedded file's path). */
declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*/bin/memsearch" {
  const text: string;
  export default text;
}
declare module "*/.gitignore" {
  const text: string;
  export default text;
}
declare module "*.png" {
  const path: string;
  export default path;
}
