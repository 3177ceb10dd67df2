/**
 * The page's `ago`: core/ago.ts's `timeAgo` itself. This file is what the type checker and the
 * tests load; the server answers /assets/ago.js with that function's own source (hub/assets.ts).
 */
export { timeAgo } from "../../core/ago.ts";
