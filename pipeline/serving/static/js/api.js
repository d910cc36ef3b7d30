// Requests to this server: JSON in and out (questions run as jobs, polled: see ask.js).

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

export async function deleteJSON(url) {
  return parse(await fetch(url, { method: "DELETE", headers: { accept: "application/json" } }));
}

// The server's health, fetched once per page load (what it answers with, whether it saves labels, its MLflow).
let healthOnce = null;
export function health(fresh = false) {
  if (healthOnce === null || fresh) healthOnce = getJSON("/v1/health");
  return healthOnce;
}
