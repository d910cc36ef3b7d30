// Elements built from values. Text is always set as text (textContent, text nodes), never parsed as
// HTML; attributes that run code or load from elsewhere are refused.

const LOCAL_URL = /^(?:#|\/(?!\/))/;

function checkAttribute(name, value) {
  const lower = name.toLowerCase();
  if (lower.startsWith("on") || lower === "style" || lower === "srcdoc") {
    throw new Error(`refusing attribute ${name}`);
  }
  if ((lower === "href" || lower === "src" || lower === "action") && !LOCAL_URL.test(String(value))) {
    throw new Error(`refusing a non-local ${name}`);
  }
}

// el("p", {class: "x", text: "hello"}, child, "more text") -> <p class="x">hello child more text</p>
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") {
      node.textContent = String(value);
      continue;
    }
    checkAttribute(name, value);
    node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, ...children);
  return node;
}

export function append(node, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

// Tells screen readers what just happened.
export function announce(message) {
  byId("announce").textContent = String(message);
}

export function formatSeconds(value) {
  return Number(value).toFixed(2);
}
