// The page viewer: a cited page, its text with the kept chunks shaded and the quoted sentences and the answer line
// marked and, for a PDF, its image. While an answer is being labelled, the page can be marked as its gold page.
import { getJSON } from "./api.js";
import { announce, append, byId, clear, el } from "./dom.js";

let opener = null;
// The label form open for an answer: {historyId, add(page)}; the viewer offers its pages to it.
let goldPicker = null;

const MARK_NAMES = { kept: "read for the answer", evidence: "quoted", answer: "the answer" };

function lineNode(line) {
  const node = el("p", { class: "page-line" });
  line.forEach((segment, index) => {
    if (index) node.append(" ");
    const mark = segment.mark || (segment.cited ? "kept" : null);
    node.append(mark ? el("mark", { class: `cited ${mark}`, "data-mark": mark, title: MARK_NAMES[mark], text: segment.text }) : segment.text);
  });
  return node;
}

export function setGoldPicker(picker) {
  goldPicker = picker;
}

function goldButton(historyId, view) {
  const box = clear(byId("viewer-gold"));
  box.hidden = !(goldPicker && goldPicker.historyId === historyId);
  if (box.hidden) return;
  const picker = goldPicker;
  const button = el("button", { type: "button", id: "viewer-mark-gold", text: "Mark as gold page" });
  const said = el("span", { class: "muted", role: "status" });
  button.addEventListener("click", () => {
    picker.add({ document_id: view.document_id, page: view.page, filename: view.filename });
    said.textContent = ` ${view.filename}, page ${view.page} is a gold page of this label.`;
    announce(said.textContent);
  });
  append(box, button, said);
}

function legend() {
  return el("p", { class: "legend muted" }, "Marked: ",
    el("span", { class: "swatch answer", text: "the answer line" }), " ",
    el("span", { class: "swatch evidence", text: "a quoted sentence" }), " ",
    el("span", { class: "swatch kept", text: "a passage read for the answer" }));
}

export async function openPage({ historyId, documentId, page, section }) {
  const dialog = byId("viewer");
  const body = clear(byId("viewer-body"));
  byId("viewer-gold").hidden = true;
  byId("viewer-title").textContent = `Page ${page}`;
  opener = document.activeElement;
  if (!dialog.open) dialog.showModal();
  const query = section === undefined || section === null ? "" : `?section=${section}`;
  let view;
  try {
    view = await getJSON(`/v1/history/${encodeURIComponent(historyId)}/pages/${encodeURIComponent(documentId)}/${page}${query}`);
  } catch (error) {
    append(body, el("p", { class: "error", role: "alert", text: error.status === 404 ? "This page is not among this answer's sources." : error.message }));
    return;
  }
  byId("viewer-title").textContent = `${view.filename}, page ${view.page} of ${view.pages}`;
  dialog.dataset.documentId = view.document_id;
  dialog.dataset.page = view.page;
  goldButton(historyId, view);
  if (view.note) body.append(el("p", { class: "muted note", text: `Showing ${view.note}.` }));
  body.append(legend());
  if (view.image) {
    const image = el("img", { src: view.image, class: "page-image", alt: `Page ${view.page} of ${view.filename}, the quoted passage highlighted` });
    const frame = el("div", { class: "page-frame" }, image);
    body.append(frame);
    const strongest = view.boxes.filter((box) => box.mark !== "kept");
    const focus = strongest.length ? strongest : view.boxes;
    if (focus.length) {
      image.addEventListener("load", () => {
        const top = Math.min(...focus.map((box) => box.top));
        frame.scrollTop = Math.max(0, top * image.height - 40);
      });
    }
  }
  body.append(el("h3", { text: view.image ? "Text of the page" : "Page text" }));
  const text = el("div", { class: "page-text" }, view.lines.map(lineNode));
  if (!view.lines.some((line) => line.length)) text.append(el("p", { class: "muted", text: "This page has no text." }));
  body.append(text);
  const first = text.querySelector("mark.answer, mark.evidence") || text.querySelector("mark");
  if (first && !view.image) first.scrollIntoView({ block: "center" });
}

export function setUpViewer() {
  const dialog = byId("viewer");
  byId("viewer-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (opener && opener.focus) opener.focus();
  });
}
