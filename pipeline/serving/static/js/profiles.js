// The Profiles view: list, activate, export (download), and import from a file with a preview and a
// confirmation before an existing profile is replaced. The file is only read here; the server checks it.
import { ApiError, getJSON, postJSON } from "./api.js";
import { announce, append, byId, clear, el } from "./dom.js";
import { serverInfo } from "./info.js";

const PROGRAM_METADATA = "metadata";
let known = [];
let payloadText = null;

function preview(payload) {
  const manifest = (payload && payload.export && payload.export.manifest) || {};
  const program = (payload && payload.export && payload.export.program) || {};
  const modules = Object.entries(program)
    .filter(([name]) => name !== PROGRAM_METADATA)
    .map(([name, state]) => {
      const demos = state && Array.isArray(state.demos) ? state.demos.length : 0;
      return `${name} (${demos} demo${demos === 1 ? "" : "s"})`;
    });
  const rows = [
    ["Source name", payload.name],
    ["Exported", manifest.created_at],
    ["Modules", modules.join(", ") || "none"],
    ["Format", payload.format],
    ["Note", payload.note],
  ];
  return el("dl", { class: "preview-list" }, rows.flatMap(([term, value]) => [
    el("dt", { text: term }), el("dd", { "data-field": term, text: value === undefined || value === null || value === "" ? "–" : String(value) }),
  ]));
}

export async function loadProfiles() {
  const body = byId("profiles-table").querySelector("tbody");
  const error = byId("profiles-error");
  error.textContent = "";
  let list;
  try {
    list = await getJSON("/v1/profiles");
  } catch (problem) {
    error.textContent = problem.message;
    known = [];
    clear(body);
    return [];
  }
  known = list.profiles;
  clear(body);
  for (const profile of list.profiles) {
    const activate = el("button", { type: "button", text: "Activate", disabled: profile.active, "aria-label": `Activate ${profile.name}` });
    activate.addEventListener("click", async () => {
      error.textContent = "";
      try {
        await postJSON(`/v1/profiles/${encodeURIComponent(profile.name)}/activate`);
        byId("profiles-status").textContent = `${profile.name} is now active: new questions are answered with it.`;
        announce(byId("profiles-status").textContent);
        await Promise.all([loadProfiles(), serverInfo()]);
      } catch (problem) {
        error.textContent = problem.message;
      }
    });
    const exportLink = el("a", {
      href: `/v1/profiles/${encodeURIComponent(profile.name)}/export`, download: `${profile.name}.scoperag-profile.json`,
      class: "button", text: "Export", "aria-label": `Export ${profile.name}`,
    });
    body.append(el("tr", { "data-profile": profile.name },
      el("td", { text: profile.name }), el("td", { text: profile.created_at }), el("td", { text: profile.note }),
      el("td", { text: profile.active ? "active" : "" }), el("td", {}, activate, " ", exportLink)));
  }
  if (!list.profiles.length) body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "No profile registered yet." })));
  return list.profiles;
}

function confirmReplace(name) {
  const dialog = byId("confirm");
  byId("confirm-text").textContent = `A profile named ${name} exists. Importing replaces its program and prompts. Continue?`;
  return new Promise((resolve) => {
    const done = (answer) => {
      byId("confirm-yes").removeEventListener("click", yes);
      byId("confirm-no").removeEventListener("click", no);
      dialog.removeEventListener("cancel", no);
      dialog.close();
      resolve(answer);
    };
    const yes = () => done(true);
    const no = () => done(false);
    byId("confirm-yes").addEventListener("click", yes);
    byId("confirm-no").addEventListener("click", no);
    dialog.addEventListener("cancel", no);
    dialog.showModal();
    byId("confirm-no").focus();
  });
}

async function importProfile(name) {
  const url = `/v1/profiles/${encodeURIComponent(name)}/import`;
  const exists = known.some((profile) => profile.name === name);
  if (exists && !(await confirmReplace(name))) return null;
  try {
    return await postJSON(exists ? `${url}?confirm=true` : url, payloadText);
  } catch (problem) {
    // registered meanwhile by someone else: ask before replacing it
    if (problem instanceof ApiError && problem.status === 409 && (await confirmReplace(name))) {
      return postJSON(`${url}?confirm=true`, payloadText);
    }
    throw problem;
  }
}

export function setUpProfiles() {
  const file = byId("import-file");
  const name = byId("import-name");
  const button = byId("import-button");
  const error = byId("import-error");
  const previewBox = byId("import-preview");

  file.addEventListener("change", async () => {
    error.textContent = "";
    clear(previewBox);
    button.disabled = true;
    payloadText = null;
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    const text = await chosen.text();
    let payload;
    try {
      payload = JSON.parse(text);
    } catch (problem) {
      error.textContent = `This file is not JSON (${problem.message}).`;
      return;
    }
    if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
      error.textContent = "This file holds no profile.";
      return;
    }
    payloadText = text;
    append(previewBox, el("h4", { text: "Preview" }), preview(payload));
    if (!name.value && typeof payload.name === "string") name.value = payload.name;
    button.disabled = false;
  });

  byId("import-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const target = name.value.trim();
    if (!target) {
      error.textContent = "Name the profile to import into.";
      name.focus();
      return;
    }
    if (payloadText === null) {
      error.textContent = "Choose a profile file first.";
      return;
    }
    try {
      const imported = await importProfile(target);
      if (imported === null) {
        byId("profiles-status").textContent = "Import cancelled; nothing changed.";
        return;
      }
      byId("profiles-status").textContent = `Imported ${imported.name}.`;
      announce(byId("profiles-status").textContent);
      await loadProfiles();
    } catch (problem) {
      error.textContent = problem.message;
    }
  });
}
