// Labelling an answer where it is read: right or wrong, the facts a correct answer states (its answer lines are
// offered), the pages holding them (marked in the viewer or picked from the pages the answer read), or "not in
// these documents". The server makes the example `scoperag label` would, shows it, and saves it when confirmed.
import { getJSON, health, postJSON } from "./api.js";
import { announce, append, clear, el } from "./dom.js";
import { setGoldPicker } from "./viewer.js";

const VERDICTS = [
  ["right", "Right"],
  ["wrong", "Wrong"],
  ["not_found", "Not in these documents"],
];

// Whether this server saves labels (started with --label-to).
export async function labelsEnabled() {
  try {
    return Boolean((await health()).labels);
  } catch {
    return false;
  }
}

// Pages the answer showed: its sections' cited pages, then those it read without citing.
async function pagesRead(historyId) {
  try {
    const found = await getJSON(`/v1/history/${encodeURIComponent(historyId)}/sources`);
    const pages = [...found.sections.flatMap((section) => section.sources), ...found.read];
    const seen = new Set();
    return pages.filter((page) => {
      const key = `${page.document_id}/${page.page}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  } catch {
    return [];
  }
}

// The answer's cited pages: what a "right" label names as gold unless told otherwise.
function citedPages(sections) {
  const pages = new Map();
  for (const section of sections) {
    if (section.status !== "answered") continue;
    for (const source of section.answer_sources || section.sources || []) {
      pages.set(`${source.document_id}/${source.page}`, source);
    }
  }
  return [...pages.values()];
}

// A label form for the answer `done` (its history id and sections), built inside `root`.
export function labelForm(root, done, prefix) {
  const id = (name) => `${prefix}-label-${name}`;
  const gold = new Map(); // "document/page" -> {document_id, page, filename}
  const answered = done.sections.filter((section) => section.status === "answered" && section.answer);
  const verdicts = el("fieldset", { class: "verdict" }, el("legend", { text: "Is this answer right?" }),
    VERDICTS.map(([value, text]) => el("label", { class: "choice" },
      el("input", { type: "radio", name: id("verdict"), value, id: id(`verdict-${value}`) }), " ", text)));
  const lines = answered.map((section) => el("label", { class: "choice fact-line" },
    el("input", { type: "checkbox", value: section.answer, "data-section": section.index }), " ",
    el("span", { text: `${section.index + 1}. ${section.answer}` })));
  const typed = el("textarea", { id: id("facts"), rows: "2", maxlength: "2000" });
  const facts = el("fieldset", { class: "facts" }, el("legend", { text: "Facts a correct answer states" }),
    lines.length ? el("div", { class: "fact-lines" }, lines) : null,
    el("label", { for: id("facts") }, lines.length ? "Other facts, one per line" : "Facts, one per line"), typed);
  const chips = el("ul", { class: "chips gold-pages", id: id("gold"), "aria-label": "Gold pages" });
  const pick = el("select", { id: id("pick") }, el("option", { value: "", text: "Pages this answer read…" }));
  const addPick = el("button", { type: "button", text: "Add page" });
  const pages = el("fieldset", { class: "gold" }, el("legend", { text: "Pages holding the answer" }), chips,
    el("p", { class: "muted", text: "Open a page from the answer and choose “Mark as gold page”, or add one it read:" }),
    el("label", { for: id("pick"), class: "visually-hidden", text: "A page this answer read" }), pick, " ", addPick);
  const split = el("select", { id: id("split") },
    [["train", "train"], ["dev", "dev"], ["test", "test"], ["", "no split"]].map(([value, text]) => el("option", { value, text })));
  const previewButton = el("button", { type: "button", class: "label-preview-button", text: "Preview the label" });
  const preview = el("div", { class: "label-preview", "aria-live": "polite" });
  const status = el("p", { class: "muted label-status", role: "status" });
  const error = el("p", { class: "error", role: "alert" });
  const form = el("section", { class: "label-form", id: id("form"), "aria-label": "Label this answer" },
    el("h4", { text: "Label this answer" }), verdicts, facts, pages,
    el("label", { for: id("split") }, "Split"), split, previewButton, preview, status, error);
  append(clear(root), form);

  const renderChips = () => {
    clear(chips);
    for (const [key, page] of gold) {
      const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${page.filename}, page ${page.page}`, text: "×" });
      remove.addEventListener("click", () => {
        gold.delete(key);
        renderChips();
        clear(preview);
      });
      chips.append(el("li", { class: "chip", "data-document-id": page.document_id, "data-page": page.page },
        el("span", { text: `${page.filename}, page ${page.page}` }), remove));
    }
    if (!gold.size) chips.append(el("li", { class: "muted", text: "No page named." }));
  };
  const addGold = (page) => {
    gold.set(`${page.document_id}/${page.page}`, page);
    renderChips();
    clear(preview);
  };
  const verdict = () => {
    const checked = verdicts.querySelector("input:checked");
    return checked ? checked.value : null;
  };
  verdicts.addEventListener("change", () => {
    const chosen = verdict();
    for (const box of facts.querySelectorAll("input[type=checkbox]")) box.checked = chosen === "right";
    if (chosen === "right" && !gold.size) citedPages(answered).forEach(addGold);
    if (chosen === "not_found") {
      gold.clear();
      renderChips();
      typed.value = "";
    }
    facts.disabled = pages.disabled = chosen === "not_found";
    clear(preview);
  });
  form.addEventListener("input", () => clear(preview));
  pagesRead(done.history_id).then((read) => {
    for (const page of read) {
      pick.append(el("option", { value: `${page.document_id}/${page.page}`, text: `${page.filename}, page ${page.page}`,
        "data-document-id": page.document_id, "data-page": page.page, "data-filename": page.filename }));
    }
  });
  addPick.addEventListener("click", () => {
    const option = pick.selectedOptions[0];
    if (!option || !option.value) return;
    addGold({ document_id: option.dataset.documentId, page: Number(option.dataset.page), filename: option.dataset.filename });
  });
  setGoldPicker({ historyId: done.history_id, add: addGold });
  renderChips();

  const request = () => {
    const chosen = verdict();
    if (!chosen) throw new Error("Say whether the answer is right, wrong, or not in these documents.");
    const named = chosen === "not_found" ? [] : [
      ...[...facts.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value),
      ...typed.value.split("\n"),
    ].map((fact) => fact.trim()).filter(Boolean);
    return {
      verdict: chosen,
      facts: named,
      gold: chosen === "not_found" ? [] : [...gold.values()].map((page) => ({ document_id: page.document_id, page: page.page })),
      split: split.value || null,
    };
  };
  const url = `/v1/history/${encodeURIComponent(done.history_id)}/label`;
  previewButton.addEventListener("click", async () => {
    error.textContent = "";
    status.textContent = "";
    clear(preview);
    let body;
    let shown;
    try {
      body = request();
      shown = await postJSON(`${url}?dry_run=true`, body);
    } catch (problem) {
      error.textContent = problem.message;
      return;
    }
    const save = el("button", { type: "button", class: "label-save", text: "Save the label" });
    append(preview,
      el("p", {}, `A ${shown.case} example, appended to `, el("code", { text: shown.file }), " when saved:"),
      el("pre", { class: "label-example", text: JSON.stringify(shown.example, null, 2) }), save);
    save.addEventListener("click", async () => {
      save.disabled = true;
      try {
        const saved = await postJSON(url, { ...body, confirm: shown.example });
        status.textContent = `Saved to ${saved.file}, line ${saved.line}.`;
        form.dataset.saved = "true";
        announce(status.textContent);
      } catch (problem) {
        error.textContent = problem.message;
        save.disabled = false;
      }
    });
    save.focus();
  });
  return form;
}

// A "Label this answer" button that opens the form beneath it (nothing when the server saves no labels).
export function labelButton(done, prefix) {
  const holder = el("div", { class: "label-holder" });
  if (!done.history_id) return holder;
  labelsEnabled().then((enabled) => {
    if (!enabled) return;
    const open = el("button", { type: "button", class: "label-open", text: "Label this answer" });
    open.addEventListener("click", () => {
      open.hidden = true;
      labelForm(holder, done, prefix).querySelector("input").focus();
    });
    holder.prepend(open);
  });
  return holder;
}
