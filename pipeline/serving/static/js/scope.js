// The scope picker: the whole collection, one entity from the catalog, or documents chosen by search (chips).
import { getJSON } from "./api.js";
import { announce, append, clear, el } from "./dom.js";

let catalog = null;

// Documents a search lists; the list scrolls past a handful.
const RESULTS = 20;

// A document named with its folder ("banda-lane/lease.pdf"): what tells apart two of the same name.
function where(document) {
  return document.folder ? `${document.folder}/${document.filename}` : document.filename;
}

export function entities() {
  if (catalog === null) catalog = getJSON("/v1/entities");
  return catalog;
}

// Builds the picker inside `root`; ids are prefixed with `prefix` so that several pickers can coexist.
export function scopePicker(root, prefix) {
  const chosen = new Map(); // document id -> document
  const id = (name) => `${prefix}-${name}`;
  const radio = (value, label, checked) =>
    el(
      "label",
      { class: "choice" },
      el("input", { type: "radio", name: id("scope"), value, id: id(`scope-${value}`), checked }),
      " ",
      label,
    );
  const kindLabel = el("span", { text: "entity" });
  const entitySelect = el("select", { id: id("entity") });
  const entityBox = el("div", { class: "scope-part", hidden: true },
    el("label", { for: id("entity") }, "Which ", el("span", { text: "entity" })),
    entitySelect);
  const search = el("input", { type: "search", id: id("doc-search"), autocomplete: "off", placeholder: "words of a filename or title" });
  const results = el("ul", { class: "results", id: id("doc-results"), "aria-label": "Matching documents" });
  const chips = el("ul", { class: "chips", id: id("chips"), "aria-label": "Selected documents" });
  const docsBox = el("div", { class: "scope-part", hidden: true },
    el("label", { for: id("doc-search") }, "Find documents by name, title or summary"),
    search, results,
    el("p", { class: "muted", id: id("chips-label"), text: "Selected documents:" }), chips);
  const fieldset = el("fieldset", { class: "scope" },
    el("legend", { text: "Scope" }),
    radio("none", "Whole collection", true), " ",
    radio("entity", el("span", {}, "One ", kindLabel)), " ",
    radio("documents", "Selected documents"),
    entityBox, docsBox);
  append(clear(root), fieldset);

  entities()
    .then((list) => {
      kindLabel.textContent = list.kind;
      entityBox.querySelector("label span").textContent = list.kind;
      for (const entity of list.entities) {
        entitySelect.append(el("option", { value: entity.entity_id, text: entity.name }));
      }
    })
    .catch((error) => append(entityBox, el("p", { class: "error", text: `Entities could not be loaded: ${error.message}` })));

  const mode = () => fieldset.querySelector(`input[name="${id("scope")}"]:checked`).value;
  fieldset.addEventListener("change", (event) => {
    if (event.target.name !== id("scope")) return;
    entityBox.hidden = mode() !== "entity";
    docsBox.hidden = mode() !== "documents";
  });

  const renderChips = () => {
    clear(chips);
    for (const [documentId, document] of chosen) {
      const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${where(document)}`, text: "×" });
      remove.addEventListener("click", () => {
        chosen.delete(documentId);
        renderChips();
        announce(`${where(document)} removed from the scope`);
        search.focus();
      });
      const owner = document.entities.join(", ") || document.folder;
      chips.append(el("li", { class: "chip", "data-document-id": documentId, title: where(document) },
        el("span", { text: document.filename }), owner ? el("span", { class: "chip-owner", text: owner }) : null, remove));
    }
  };

  let pending = 0;
  const find = async () => {
    const query = search.value.trim();
    const mine = ++pending;
    if (!query) {
      clear(results);
      return;
    }
    let found;
    try {
      found = await getJSON(`/v1/documents?q=${encodeURIComponent(query)}&k=${RESULTS}`);
    } catch (error) {
      if (mine === pending) append(clear(results), el("li", { class: "error", text: error.message }));
      return;
    }
    if (mine !== pending) return; // a later search is on its way
    clear(results);
    for (const document of found.documents) {
      const add = el("button", { type: "button", class: "result", "data-document-id": document.document_id },
        el("strong", { text: document.filename }), " ",
        el("span", { class: "muted", text: [document.folder && `${document.folder}/`, document.title, document.entities.join(", ")]
          .filter(Boolean).join(" · ") }));
      add.addEventListener("click", () => {
        chosen.set(document.document_id, document);
        renderChips();
        announce(`${where(document)} added to the scope`);
      });
      results.append(el("li", {}, add));
    }
    if (!found.documents.length) results.append(el("li", { class: "muted", text: "No document matches." }));
  };
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(find, 200);
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault(); // Enter searches now instead of submitting the question
      clearTimeout(timer);
      find();
    }
  });

  return {
    // The scope fields of a query request; throws when the chosen scope is incomplete.
    request() {
      if (mode() === "entity") {
        if (!entitySelect.value) throw new Error(`Choose a ${kindLabel.textContent} first.`);
        return { property: entitySelect.value };
      }
      if (mode() === "documents") {
        if (!chosen.size) throw new Error("Add at least one document, or choose another scope.");
        return { document_ids: [...chosen.keys()] };
      }
      return {};
    },
  };
}
