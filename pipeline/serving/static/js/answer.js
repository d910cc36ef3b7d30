// The answer: sub-questions as anchors, one card per section with its answer line, the evidence quoted beneath
// it and its sources, the copy button, clarifying questions, the notice, and any other typed answer the server
// sends.
import { getJSON } from "./api.js";
import { announce, append, el, formatSeconds } from "./dom.js";
import { labelButton } from "./label.js";
import { openPage } from "./viewer.js";

// Fields of the completed event this page knows; any other non-empty field is shown as a typed answer.
const KNOWN = new Set([
  "phase", "answer", "sections", "strategy", "clarifying_questions", "notice",
  "lm_calls", "cached_calls", "tokens", "seconds", "history_id", "stream_id", "job_id", "seq",
  // entity ids the question names; History's scope column says it in words
  "implicit_scope",
]);

function humanise(key) {
  const words = key.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function valueNodes(value) {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return [el("ul", {}, value.map((item) => el("li", {}, valueNodes(item))))];
  if (typeof value === "object") {
    return [el("dl", {}, Object.entries(value).flatMap(([key, inner]) => [el("dt", { text: humanise(key) }), el("dd", {}, valueNodes(inner))]))];
  }
  return [String(value)];
}

function isEmpty(value) {
  return value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length);
}

// The sources of a recorded answer with snippets, by section index (empty when the server keeps no history).
export async function sourcesOf(historyId) {
  if (!historyId) return new Map();
  try {
    const found = await getJSON(`/v1/history/${encodeURIComponent(historyId)}/sources`);
    return new Map(found.sections.map((section) => [section.index, section.sources]));
  } catch {
    return new Map();
  }
}

function pageButton(ctx, section, source, text) {
  if (!ctx.historyId) return el("span", { class: "citation", text });
  const button = el("button", {
    type: "button", class: "citation", text,
    "data-document-id": source.document_id, "data-page": source.page,
    "aria-label": `Open ${source.filename}, page ${source.page}`,
  });
  button.addEventListener("click", () =>
    openPage({ historyId: ctx.historyId, documentId: source.document_id, page: source.page, section: section.index }));
  return button;
}

function cited(ctx, section, text, sources) {
  const nodes = [text];
  for (const source of sources) nodes.push(" ", pageButton(ctx, section, source, `[${source.filename}, page ${source.page}]`));
  return nodes;
}

export function sectionCard(ctx, section) {
  const headingId = `${ctx.prefix}-section-${section.index}-title`;
  const card = el("article", {
    class: `card status-${section.status}`, id: `${ctx.prefix}-section-${section.index}`,
    "aria-labelledby": headingId, "data-sub-question": section.sub_question, tabindex: "-1",
  });
  append(card, el("h4", { id: headingId }, el("span", { class: "number", text: `${section.index + 1}. ` }), section.sub_question));
  if (section.status === "error") {
    card.append(el("p", { class: "error", text: section.error || "This section could not be answered." }));
  } else if (section.status === "not_found") {
    card.append(el("p", { class: "not-found", text: section.answer }));
  } else {
    card.append(el("p", { class: "answer-line" }, el("strong", {}, cited(ctx, section, section.answer, section.answer_sources))));
    if (section.formula) card.append(el("p", { class: "formula muted", text: `Computed: ${section.formula}` }));
    if (section.evidence.length) {
      card.append(el("div", { class: "evidence", "aria-label": "Evidence" },
        section.evidence.map((quote) => el("blockquote", { class: "quote" }, cited(ctx, section, quote.text, [quote.source])))));
    }
  }
  if (section.sources.length) {
    const list = el("ul", { class: "sources" });
    for (const source of section.sources) {
      const item = el("li", { "data-document-id": source.document_id, "data-page": source.page },
        pageButton(ctx, section, source, `${source.filename}, page ${source.page}`));
      list.append(item);
    }
    card.append(el("details", { class: "sources-box" },
      el("summary", { text: `Sources (${section.sources.length})` }), list));
    ctx.sources.then((bySection) => {
      for (const found of bySection.get(section.index) || []) {
        const item = [...list.children].find((li) => li.dataset.documentId === found.document_id && Number(li.dataset.page) === found.page);
        if (item && found.snippet) item.append(el("blockquote", { class: "snippet", text: found.snippet }));
      }
    });
  }
  return card;
}

export function metaLine(done) {
  return el("p", { class: "muted meta" },
    `${done.lm_calls} LM call${done.lm_calls === 1 ? "" : "s"}${done.cached_calls ? ` (${done.cached_calls} from the cache)` : ""} · ${done.tokens} tokens · ${formatSeconds(done.seconds)} s${done.strategy ? ` · ${done.strategy}` : ""}`);
}

// The clarifying questions, the notice and any typed answer this page does not know by name.
export function extras(done) {
  const nodes = [];
  if (done.clarifying_questions && done.clarifying_questions.length) {
    nodes.push(el("aside", { class: "clarify", "aria-label": "Clarifying questions" },
      el("h4", { text: "The planner asks" }),
      el("ul", {}, done.clarifying_questions.map((question) => el("li", { text: question })))));
  }
  if (done.notice) nodes.push(el("p", { class: "notice", role: "note" }, el("strong", { text: "Note: " }), done.notice));
  for (const [key, value] of Object.entries(done)) {
    if (KNOWN.has(key) || isEmpty(value)) continue;
    nodes.push(el("aside", { class: "notice typed", "data-field": key, "aria-label": humanise(key) },
      el("h4", { text: humanise(key) }), valueNodes(value)));
  }
  return nodes;
}

async function copy(text, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = "Copied.";
  } catch {
    status.textContent = "The browser refused to copy; select the answer and copy it yourself.";
  }
  announce(status.textContent);
}

export function renderAnswer(done, prefix = "answer") {
  const ctx = { prefix, historyId: done.history_id, sources: sourcesOf(done.history_id) };
  const status = el("span", { class: "muted", role: "status" });
  const copyButton = el("button", { type: "button", class: "copy", text: "Copy answer" });
  copyButton.addEventListener("click", () => copy(done.answer, status));
  const root = el("div", { class: "answer-body", "data-history-id": done.history_id || "" },
    el("div", { class: "answer-head" }, el("h3", { text: "Answer" }), copyButton, " ", status),
    metaLine(done), extras(done));
  if (done.sections.length) {
    const cards = el("div", { class: "cards" }, done.sections.map((section) => sectionCard(ctx, section)));
    const anchors = done.sections.map((section) => {
      const link = el("a", { href: `#${prefix}-section-${section.index}`, text: section.sub_question });
      link.addEventListener("click", (event) => {
        event.preventDefault(); // the address keeps naming the view; focus moves to the section instead
        const card = cards.querySelector(`[id="${prefix}-section-${section.index}"]`);
        card.scrollIntoView({ block: "start" });
        card.focus();
      });
      return el("li", {}, link);
    });
    root.append(el("nav", { class: "sub-questions", "aria-label": "Sub-questions" }, el("ol", {}, anchors)), cards);
  }
  root.append(labelButton(done, prefix));
  return root;
}
