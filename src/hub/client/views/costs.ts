/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** What the memory cost (the model-call ledger), per month and day. */
import type { CostRowView, CostsPage } from "../../types.ts";
import { plural } from "../charts.js";
import { h, timeEl } from "../dom.js";

function costTable(caption: string, rows: CostRowView[], first: string): HTMLElement {
  // claude -p says what each call cost; its column is there once any call of the table said so.
  const reported = rows.some((r) => r.reportedCalls > 0);
  return h(
    "div",
    { class: "costs-scroll" },
    h(
      "table",
      { class: "costs" },
      h("caption", { class: "sr" }, caption),
      h("thead", {}, h("tr", {}, [first, "Calls", "Tokens in", "Tokens out", "Estimate", ...(reported ? ["Reported"] : [])].map((t) => h("th", { scope: "col", ...(t === "Reported" ? { title: "What claude -p itself reported the calls cost" } : {}) }, t)))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            { "data-period": r.period },
            h("th", { scope: "row" }, timeEl(r.period)),
            h("td", {}, r.calls.toLocaleString("en-US"), r.failed ? ` (${r.failed} failed)` : ""),
            h("td", {}, r.inTokens.toLocaleString("en-US")),
            h("td", {}, r.outTokens.toLocaleString("en-US")),
            h("td", {}, r.shown),
            reported ? h("td", { "data-reported": r.reportedUsd }, r.reportedShown ? `${r.reportedShown}${r.reportedCalls < r.calls ? ` (${r.reportedCalls}/${r.calls})` : ""}` : "—") : null,
          ),
        ),
      ),
    ),
  );
}

export function costPanel(c: CostsPage): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "cost-title", id: "costs" },
    h("h2", { id: "cost-title" }, "What the memory cost"),
    c.total.calls
      ? [
          h(
            "p",
            { class: "muted", "data-cost-total": c.total.calls },
            `${plural(c.total.calls, "model call")}, ${c.total.shown}: claude list prices as of `,
            timeEl(c.pricesAsOf),
            "; Ollama and the extract cost nothing.",
            c.total.reportedShown ? ` claude -p itself reported ${c.total.reportedShown}${c.total.reportedCalls < c.total.calls ? ` for ${c.total.reportedCalls} of the ${plural(c.total.calls, "call")}` : ""} (the Reported column).` : "",
          ),
          h("h3", {}, "Per month"),
          costTable("Model calls per month", c.months, "Month"),
          h("h3", {}, "Per day"),
          costTable("Model calls per day", c.days.slice(0, 7), "Day"),
        ]
      : h("p", { class: "muted" }, "No model call recorded: notes written by the extract, and keyword search, cost nothing."),
  );
}
