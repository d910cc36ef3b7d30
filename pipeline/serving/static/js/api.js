// Requests to this server: JSON in and out, and the question stream (server-sent events over a POST).

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

// The message of an error body: a string, or FastAPI's list of problems.
export function detailOf(body, status) {
  const detail = body && typeof body === "object" ? body.detail : null;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item) => {
        const where = Array.isArray(item.loc) ? item.loc.filter((part) => part !== "body").join(".") : "";
        return where ? `${where}: ${item.msg}` : String(item.msg);
      })
      .join("; ");
  }
  return `the server answered ${status}`;
}

async function parse(response) {
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, detailOf(body, response.status));
  return body;
}

export async function getJSON(url) {
  return parse(await fetch(url, { headers: { accept: "application/json" } }));
}

export async function postJSON(url, data) {
  const options = { method: "POST", headers: { accept: "application/json" } };
  if (data !== undefined) {
    options.headers["content-type"] = "application/json";
    options.body = typeof data === "string" ? data : JSON.stringify(data);
  }
  return parse(await fetch(url, options));
}

function parseFrame(frame) {
  let event = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { event, data: JSON.parse(data.join("\n")) } : null;
}

// POST /v1/query; calls onEvent({event, data}) for each event until the stream ends.
export async function streamQuery(body, onEvent, signal) {
  const response = await fetch("/v1/query", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) await parse(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const message = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (message) onEvent(message);
    }
    if (done) break;
  }
  const last = parseFrame(buffer.trim());
  if (last) onEvent(last);
}

export async function deleteJSON(url) {
  return parse(await fetch(url, { method: "DELETE", headers: { accept: "application/json" } }));
}

// The server's health, fetched once per page load (what it answers with, whether it saves labels, its MLflow).
let healthOnce = null;
export function health(fresh = false) {
  if (healthOnce === null || fresh) healthOnce = getJSON("/v1/health");
  return healthOnce;
}
