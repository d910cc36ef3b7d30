// The History view: recent questions, and one question's trace.
import { getJSON } from "./api.js";
import { append, byId, clear, el, formatSeconds } from "./dom.js";

function table(caption, headers, rows) {
  return el("table", { class: "table" },
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, headers.map((header) => el("th", { scope: "col", text: header })))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, cell))))));
}

function score(value) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(3);
}

function pairs(caption, object) {
  const entries = Object.entries(object || {});
  return entries.length ? table(caption, ["Name", "Value"], entries.map(([key, value]) => [key, typeof value === "number" ? String(value) : JSON.stringify(value)])) : null;
}

function subQuestion(sub) {
  const chunks = sub.chunks.map((chunk) => [
    chunk.filename, String(chunk.page), score(chunk.retrieval_score), score(chunk.relevance), chunk.kept ? "kept" : "dropped",
  ]);
  const steps = sub.steps.map((step) => [String(step.round ?? ""), String(step.tool ?? ""), String(step.query ?? ""), String((step.sent || []).length), String(step.status ?? "")]);
  return el("section", { class: "trace-sub", "data-index": sub.index },
    el("h4", { text: `${sub.index + 1}. ${sub.sub_question}` }),
    sub.stop_reason ? el("p", { class: "muted", text: `Stopped: ${sub.stop_reason}` }) : null,
    steps.length ? table("Tool steps", ["Round", "Tool", "Query", "Documents", "Status"], steps) : null,
    table(`Chunks retrieved (${chunks.length}) and kept (${sub.chunks.filter((c) => c.kept).length})`,
      ["File", "Page", "Retrieval score", "Relevance", "Kept"], chunks));
}

function guards(trace) {
  const rows = [...trace.interventions.map((i) => ["intervention", i.guard, i.target, i.reason]),
    ...trace.fallbacks.map((i) => ["fallback", i.guard, i.target, i.reason])];
  return rows.length
    ? table("Guard interventions", ["Kind", "Guard", "Target", "Reason"], rows)
    : el("p", { class: "muted", text: "No guard intervened." });
}

async function showTrace(historyId) {
  const root = clear(byId("trace"));
  let detail;
  try {
    detail = await getJSON(`/v1/history/${encodeURIComponent(historyId)}`);
  } catch (error) {
    append(root, el("p", { class: "error", role: "alert", text: error.message }));
    return;
  }
  const { entry, trace } = detail;
  const scope = trace.scope || {};
  append(root,
    el("h3", { id: "trace-title", tabindex: "-1", text: `Trace: ${entry.question}` }),
    el("p", { class: "muted", text: `${entry.created_at} · scope ${scope.kind}${scope.document_ids && scope.document_ids.length ? ` (${scope.document_ids.length} documents)` : ""} · ${trace.lm_calls} LM calls · ${trace.prompt_tokens} prompt + ${trace.completion_tokens} completion tokens · ${formatSeconds(entry.seconds)} s` }),
    pairs("LM calls per step", trace.lm_attempts),
    pairs("Time per stage (seconds)", trace.timings),
    el("h4", { text: "Plan" }),
    el("pre", { class: "plan", text: JSON.stringify(trace.planner, null, 2) }),
    trace.sub_questions.map(subQuestion),
    el("h4", { text: "Guards" }),
    guards(trace),
    trace.tool_loop && trace.tool_loop.message ? el("p", { class: "notice", text: trace.tool_loop.message }) : null);
  byId("trace-title").focus();
}

export async function loadHistory() {
  const body = byId("history-table").querySelector("tbody");
  const error = byId("history-error");
  error.textContent = "";
  let list;
  try {
    list = await getJSON("/v1/history?limit=30");
  } catch (problem) {
    error.textContent = problem.message;
    return;
  }
  clear(body);
  for (const entry of list.entries) {
    const open = el("button", { type: "button", text: "Trace", "aria-label": `Show the trace of: ${entry.question}` });
    open.addEventListener("click", () => showTrace(entry.history_id));
    body.append(el("tr", { "data-history-id": entry.history_id },
      el("td", { text: entry.created_at }), el("td", { text: entry.question }), el("td", { text: String(entry.lm_calls) }),
      el("td", { text: String(entry.tokens) }), el("td", { text: formatSeconds(entry.seconds) }), el("td", {}, open)));
  }
  if (!list.entries.length) body.append(el("tr", {}, el("td", { colspan: "6", class: "muted", text: "No question asked yet." })));
}

export function setUpHistory() {
  byId("history-refresh").addEventListener("click", loadHistory);
}
