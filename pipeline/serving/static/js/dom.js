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
  return Number(value).toFixed(1);
}

const WEB_URL = /^https?:\/\/[^\s"'<>]+$/;

// A link to another site the operator configured (an MLflow server): opened in a new tab, never sent a referrer.
export function externalLink(url, text, label) {
  if (!WEB_URL.test(String(url))) throw new Error("refusing a link that is not an http(s) address");
  const link = el("a", { class: "external", target: "_blank", rel: "noopener noreferrer", text, "aria-label": label });
  link.setAttribute("href", String(url));
  return link;
}

// An ISO time (UTC) in the reader's own time zone, e.g. "25/11/2026, 21:05:12".
export function localTime(iso) {
  const when = new Date(iso);
  return Number.isNaN(when.getTime()) ? String(iso) : when.toLocaleString();
}

// Seconds as m:ss (h:mm:ss past an hour).
export function clockTime(seconds) {
  const whole = Math.max(0, Math.round(Number(seconds)));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

// A number for reading: integers as they are, others rounded to `digits` decimals.
export function rounded(value, digits = 2) {
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  return Number.isInteger(number) ? String(number) : number.toFixed(digits);
}
