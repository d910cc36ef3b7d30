// The History view: questions running now, recent questions (searchable, with scope and status), and one
// question's answer (labelled from here too) and trace.
import { getJSON } from "./api.js";
import { append, byId, clear, clockTime, el, formatSeconds, localTime, rounded } from "./dom.js";
import { renderAnswer } from "./answer.js";
import { attach } from "./ask.js";

const STATUS_TEXT = { done: "answered", failed: "failed", cancelled: "cancelled", stopped: "stopped at its time bound", running: "running", interrupted: "interrupted" };

function table(caption, headers, rows) {
  return el("table", { class: "table" },
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, headers.map((header) => el("th", { scope: "col", text: header })))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, cell))))));
}

function score(value) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(3);
}

function humanise(key) {
  const words = String(key).replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function pairs(caption, object) {
  const entries = Object.entries(object || {});
  return entries.length ? table(caption, ["Name", "Value"], entries.map(([key, value]) => [key, typeof value === "number" ? rounded(value) : JSON.stringify(value)])) : null;
}

// A value of the plan as nested lists: keys in words, numbers rounded, empty parts left out.
function readable(value) {
  if (value === null || value === undefined || value === "") return null;
  if (Array.isArray(value)) {
    const items = value.map(readable).filter((item) => item !== null);
    return items.length ? el("ol", {}, items.map((item) => el("li", {}, item))) : null;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value).map(([key, inner]) => [key, readable(inner)]).filter(([, inner]) => inner !== null);
    return entries.length ? el("dl", { class: "plan-list" }, entries.flatMap(([key, inner]) => [el("dt", { text: humanise(key) }), el("dd", {}, inner)])) : null;
  }
  if (typeof value === "number") return rounded(value, 3);
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
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

// The recorded answer in the shape of a completed event, so that it renders (and is labelled) like a new one.
function recordedAnswer(entry, answer, trace) {
  return {
    answer, sections: trace.sections || [], strategy: (trace.planner || {}).strategy || "",
    lm_calls: entry.lm_calls, cached_calls: trace.cached_calls || 0, tokens: entry.tokens, seconds: entry.seconds,
    history_id: entry.history_id, value: trace.value || null,
  };
}

export async function showTrace(historyId) {
  const root = clear(byId("trace"));
  let detail;
  try {
    detail = await getJSON(`/v1/history/${encodeURIComponent(historyId)}`);
  } catch (error) {
    append(root, el("p", { class: "error", role: "alert", text: error.message }));
    return;
  }
  const { entry, trace, answer } = detail;
  append(root,
    el("h3", { id: "trace-title", tabindex: "-1", text: `Trace: ${entry.question}` }),
    el("p", { class: "muted trace-meta", text: `${localTime(entry.created_at)} · ${STATUS_TEXT[entry.status]} · scope: ${entry.scope.label} · ${trace.lm_calls} LM calls · ${trace.prompt_tokens} prompt + ${trace.completion_tokens} completion tokens · ${formatSeconds(entry.seconds)} s` }),
    renderAnswer(recordedAnswer(entry, answer, trace), "recorded"),
    pairs("LM calls per step", trace.lm_attempts),
    pairs("Time per stage (seconds)", trace.timings),
    el("h4", { text: "Plan" }),
    readable(trace.planner) || el("p", { class: "muted", text: "No plan was recorded." }),
    el("details", { class: "plan-json" }, el("summary", { text: "The plan as JSON" }),
      el("pre", { class: "plan", text: JSON.stringify(trace.planner, null, 2) })),
    trace.sub_questions.map(subQuestion),
    el("h4", { text: "Guards" }),
    guards(trace),
    trace.tool_loop && trace.tool_loop.message ? el("p", { class: "notice", text: trace.tool_loop.message }) : null);
  byId("trace-title").focus();
}

async function loadRunning() {
  const box = byId("running-jobs");
  const list = clear(byId("running-list"));
  let found;
  try {
    found = await getJSON("/v1/jobs");
  } catch {
    box.hidden = true;
    return;
  }
  const running = found.jobs.filter((job) => job.status === "running");
  box.hidden = !running.length;
  for (const job of running) {
    const open = el("button", { type: "button", text: "Follow", "aria-label": `Follow the question: ${job.question}` });
    open.addEventListener("click", () => {
      location.hash = "#ask";
      attach(job.job_id);
    });
    list.append(el("li", { "data-job-id": job.job_id },
      el("span", { class: "question", text: job.question }), " ",
      el("span", { class: "muted", text: `${job.scope.label} · ${clockTime(job.elapsed)} elapsed` }), " ", open));
  }
}

export async function loadHistory() {
  const body = byId("history-table").querySelector("tbody");
  const error = byId("history-error");
  error.textContent = "";
  const words = byId("history-search").value.trim();
  const every = byId("history-all").checked; // questions of every index, not only the one served
  loadRunning();
  let list;
  try {
    list = await getJSON(`/v1/history?limit=50${words ? `&q=${encodeURIComponent(words)}` : ""}${every ? "&all=true" : ""}`);
  } catch (problem) {
    error.textContent = problem.message;
    return;
  }
  if (byId("history-search").value.trim() !== words) return; // a later search is on its way
  clear(body);
  for (const entry of list.entries) {
    const open = el("button", { type: "button", text: "Open", "aria-label": `Show the answer and trace of: ${entry.question}` });
    open.addEventListener("click", () => showTrace(entry.history_id));
    body.append(el("tr", { "data-history-id": entry.history_id, "data-status": entry.status },
      el("td", { text: localTime(entry.created_at), title: entry.created_at }), el("td", { text: entry.question }),
      el("td", { text: entry.index ? `${entry.scope.label} (index ${entry.index})` : entry.scope.label, "data-kind": entry.scope.kind }),
      el("td", {}, el("span", { class: `badge status-${entry.status}`, text: STATUS_TEXT[entry.status] })),
      el("td", { text: String(entry.lm_calls) }), el("td", { text: String(entry.tokens) }),
      el("td", { text: formatSeconds(entry.seconds) }), el("td", {}, open)));
  }
  if (!list.entries.length) {
    const none = words ? `No question holds “${words}”.` : every ? "No question asked yet." : "No question asked of this index yet (All indexes shows the others).";
    body.append(el("tr", {}, el("td", { colspan: "8", class: "muted", text: none })));
  }
}

export function setUpHistory() {
  byId("history-refresh").addEventListener("click", loadHistory);
  byId("history-all").addEventListener("change", loadHistory);
  let timer = null;
  byId("history-search").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(loadHistory, 250);
  });
}
