// The page viewer: a cited page, its text with the cited chunks marked and, for a PDF, its image.
import { getJSON } from "./api.js";
import { append, byId, clear, el } from "./dom.js";

let opener = null;

function lineNode(line) {
  const node = el("p", { class: "page-line" });
  line.forEach((segment, index) => {
    if (index) node.append(" ");
    node.append(segment.cited ? el("mark", { class: "cited", text: segment.text }) : segment.text);
  });
  return node;
}

export async function openPage({ historyId, documentId, page, section }) {
  const dialog = byId("viewer");
  const body = clear(byId("viewer-body"));
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
  if (view.note) body.append(el("p", { class: "muted note", text: `Showing ${view.note}.` }));
  if (view.image) {
    const image = el("img", { src: view.image, class: "page-image", alt: `Page ${view.page} of ${view.filename}, the cited passage highlighted` });
    const frame = el("div", { class: "page-frame" }, image);
    body.append(frame);
    if (view.boxes.length) {
      image.addEventListener("load", () => {
        const top = Math.min(...view.boxes.map((box) => box.top));
        frame.scrollTop = Math.max(0, top * image.height - 40);
      });
    }
  }
  body.append(el("h3", { text: view.image ? "Text of the page" : "Page text" }));
  const text = el("div", { class: "page-text" }, view.lines.map(lineNode));
  if (!view.lines.some((line) => line.length)) text.append(el("p", { class: "muted", text: "This page has no text." }));
  body.append(text);
  const first = text.querySelector("mark");
  if (first && !view.image) first.scrollIntoView({ block: "center" });
}

export function setUpViewer() {
  const dialog = byId("viewer");
  byId("viewer-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (opener && opener.focus) opener.focus();
  });
}
