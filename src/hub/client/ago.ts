/**
 * The page's `ago`: core/ago.ts itself. This file is what the type checker and the tests load;
 * the server answers /assets/ago.js with core/ago.ts's own text (hub/assets.ts).
 */
export { timeAgo } from "../../core/ago.ts";
