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
  // the answer's typed value: its own line (valueLine)
  "value",
]);

// A cited document as a reader knows it: its title (a filing's company, form and period), else its file name.
function documentName(source) {
  return source.title || source.filename;
}

function grouped(number) {
  if (Number.isInteger(number)) return number.toLocaleString("en-US");
  return number.toLocaleString("en-US", { maximumFractionDigits: 4 });
}

function pagesText(pages) {
  const byDocument = new Map();
  for (const source of pages) {
    const entry = byDocument.get(source.document_id) || { name: documentName(source), pages: new Set() };
    entry.pages.add(source.page);
    byDocument.set(source.document_id, entry);
  }
  const listed = (numbers) => {
    const ordered = [...numbers].sort((a, b) => a - b);
    return `${ordered.length === 1 ? "page" : "pages"} ${ordered.join(", ")}`;
  };
  const entries = [...byDocument.values()];
  if (entries.length === 1) return listed(entries[0].pages);
  return entries.map((entry) => `${entry.name}, ${listed(entry.pages)}`).join("; ");
}

// A typed value as one line, as the command line shows it (pipeline.program.events.value_text):
// "406,100,000 USD (number; page 4)", "N/A (absent: not stated in the documents in scope)".
export function valueText(value) {
  let shown;
  if (typeof value.value === "number") {
    const number = grouped(value.value);
    shown = value.unit === "%" ? `${number}%` : [number, value.scale, value.currency, value.unit].filter(Boolean).join(" ");
  } else if (Array.isArray(value.value)) {
    shown = value.value.join("; ");
  } else {
    shown = value.value === null || value.value === undefined ? "" : String(value.value === true ? "True" : value.value === false ? "False" : value.value);
  }
  if (value.absent && !shown && value.absent_value !== null && value.absent_value !== undefined) {
    shown = String(value.absent_value);  // the question's own absent value, which the field could not hold ("N/A")
  }
  if (value.absent) return `${shown || "none"} (absent: ${value.note || "not stated in the documents in scope"})`;
  const details = [value.kind];
  if (value.period) details.push(`period ${value.period}`);
  if (value.pages && value.pages.length) details.push(pagesText(value.pages));
  if (value.note) details.push(value.note);
  return `${shown} (${details.join("; ")})`;
}

function valueLine(value) {
  return el("p", { class: "value", "data-kind": value.kind, "data-absent": value.absent ? "true" : "false" },
    el("span", { class: "muted", text: "Value: " }), el("span", { class: "value-text", text: valueText(value) }));
}

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
    "data-document-id": source.document_id, "data-page": source.page, title: source.filename,
    "aria-label": `Open ${documentName(source)}, page ${source.page}`,
  });
  button.addEventListener("click", () =>
    openPage({ historyId: ctx.historyId, documentId: source.document_id, page: source.page, section: section.index }));
  return button;
}

function cited(ctx, section, text, sources) {
  const nodes = [text];
  for (const source of sources) nodes.push(" ", pageButton(ctx, section, source, `[${documentName(source)}, page ${source.page}]`));
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
    if (section.value) card.append(valueLine(section.value));
  } else {
    card.append(el("p", { class: "answer-line" }, el("strong", {}, cited(ctx, section, section.answer, section.answer_sources))));
    if (section.value) card.append(valueLine(section.value));
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
        pageButton(ctx, section, source, `${documentName(source)}, page ${source.page}`));
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

// The question's own typed value, unless it is its one section's (shown on that section's card).
function answerValue(done) {
  if (!done.value) return null;
  const sections = done.sections || [];
  if (sections.length === 1 && JSON.stringify(sections[0].value) === JSON.stringify(done.value)) return null;
  return valueLine(done.value);
}

export function renderAnswer(done, prefix = "answer") {
  const ctx = { prefix, historyId: done.history_id, sources: sourcesOf(done.history_id) };
  const status = el("span", { class: "muted", role: "status" });
  const copyButton = el("button", { type: "button", class: "copy", text: "Copy answer" });
  copyButton.addEventListener("click", () => copy(done.answer, status));
  const root = el("div", { class: "answer-body", "data-history-id": done.history_id || "" },
    el("div", { class: "answer-head" }, el("h3", { text: "Answer" }), copyButton, " ", status),
    metaLine(done), answerValue(done), extras(done));
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
