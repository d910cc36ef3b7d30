// The Profiles view: list, activate, export (download), remove (after confirming), read a profile's prompts,
// compare two profiles' prompts and demos, and import from a file. A file is checked here first (its shape, in
// plain words, before anything is sent), then by the server as import checks it, and only then can be imported.
import { ApiError, deleteJSON, getJSON, postJSON } from "./api.js";
import { announce, append, byId, clear, el, localTime } from "./dom.js";
import { serverInfo } from "./info.js";

const PROFILE_FORMAT = "scoperag-profile/v1";
const BUNDLE_FORMAT = "scoperag-profiles-bundle/v1";
const PROGRAM_FORMAT = "scoperag-program/v3";
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_BYTES = 1024 * 1024;
let known = [];
let payloadText = null;

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

// What is wrong with a profile document, in plain words (null when its shape is right; the server checks the rest).
export function shapeProblem(payload, size) {
  if (size > MAX_BYTES) return `This file is ${Math.round(size / 1024)} KiB; a profile file holds at most 1 MiB.`;
  if (!isObject(payload)) return "This file holds no profile: a profile file is one JSON object.";
  if (payload.format === BUNDLE_FORMAT) return "This file is a backup of every profile; import one profile's own file (Export on its row).";
  if (payload.format !== PROFILE_FORMAT) {
    const found = typeof payload.format === "string" ? `“${payload.format.slice(0, 60)}”` : "none";
    return `This file is not a scoperag profile (its format is ${found}); choose a file that Export or \`scoperag profile export\` wrote.`;
  }
  if (typeof payload.name !== "string" || !NAME.test(payload.name)) return "The profile in this file has no valid name.";
  if (typeof payload.note !== "string") return "The profile in this file has no note text.";
  const inline = payload.export;
  if (!isObject(inline) || !isObject(inline.manifest) || !isObject(inline.program) || typeof inline.prompts_md !== "string") {
    return "This profile file is incomplete: its program, manifest or prompts are missing.";
  }
  if (inline.manifest.format !== PROGRAM_FORMAT) return "This profile holds a program of another scoperag version; export it again with this version.";
  return null;
}

function preview(payload, checked) {
  const modules = checked.modules.map((module) => `${module.name} (${module.demos} demo${module.demos === 1 ? "" : "s"})`);
  const rows = [
    ["Source name", checked.name],
    ["Exported", checked.exported_at],
    ["Modules", modules.join(", ") || "none"],
    ["Format", payload.format],
    ["Note", checked.note],
  ];
  return el("dl", { class: "preview-list" }, rows.flatMap(([term, value]) => [
    el("dt", { text: term }), el("dd", { "data-field": term, text: value === undefined || value === null || value === "" ? "–" : String(value) }),
  ]));
}

function confirm({ title, text, yes }) {
  const dialog = byId("confirm");
  byId("confirm-title").textContent = title;
  byId("confirm-text").textContent = text;
  byId("confirm-yes").textContent = yes;
  return new Promise((resolve) => {
    const done = (answer) => {
      byId("confirm-yes").removeEventListener("click", onYes);
      byId("confirm-no").removeEventListener("click", onNo);
      dialog.removeEventListener("cancel", onNo);
      dialog.close();
      resolve(answer);
    };
    const onYes = () => done(true);
    const onNo = () => done(false);
    byId("confirm-yes").addEventListener("click", onYes);
    byId("confirm-no").addEventListener("click", onNo);
    dialog.addEventListener("cancel", onNo);
    dialog.showModal();
    byId("confirm-no").focus();
  });
}

const confirmReplace = (name) => confirm({
  title: "Replace profile?", yes: "Replace",
  text: `A profile named ${name} exists. Importing replaces its program and prompts. Continue?`,
});

// A profile's program and prompts (prompts.md) shown in `panel`.
export async function showPrompts(name, panel) {
  panel.hidden = false;
  clear(panel);
  let detail;
  try {
    detail = await getJSON(`/v1/profiles/${encodeURIComponent(name)}`);
  } catch (problem) {
    append(panel, el("p", { class: "error", role: "alert", text: problem.message }));
    return;
  }
  const close = el("button", { type: "button", text: "Close", "aria-label": `Close the prompts of ${name}` });
  close.addEventListener("click", () => {
    panel.hidden = true;
  });
  const modules = detail.modules.map((module) => `${module.name}: ${module.demos} demo${module.demos === 1 ? "" : "s"}`).join(" · ");
  append(panel,
    el("div", { class: "panel-head" }, el("h3", { id: `${panel.id}-title`, tabindex: "-1", text: `Prompts of ${name}` }), close),
    el("p", { class: "muted", text: `Exported ${localTime(detail.exported_at)} · run ${detail.run_id || "none"} · LM ${detail.lm || "not recorded"} · ${modules}` }),
    el("pre", { class: "prompts-md", text: detail.prompts_md }));
  byId(`${panel.id}-title`).focus();
}

function fillDiffChoices(profiles) {
  const selects = [byId("diff-a"), byId("diff-b")];
  selects.forEach((select, index) => {
    const keep = select.value;
    clear(select);
    for (const profile of profiles) select.append(el("option", { value: profile.name, text: profile.name }));
    if (profiles.some((profile) => profile.name === keep)) select.value = keep;
    else if (profiles[index]) select.value = profiles[index].name;
  });
  byId("diff-button").disabled = profiles.length < 2;
}

async function showDiff() {
  const a = byId("diff-a").value;
  const b = byId("diff-b").value;
  const root = clear(byId("diff-result"));
  byId("diff-error").textContent = "";
  let diff;
  try {
    diff = await getJSON(`/v1/profiles/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  } catch (problem) {
    byId("diff-error").textContent = problem.message;
    return;
  }
  const rows = diff.modules.map((module) => el("tr", { "data-module": module.name, class: module.instructions_changed || module.demos_a !== module.demos_b ? "changed" : "" },
    el("td", { text: module.name }), el("td", { text: module.instructions_changed ? "differ" : "same" }),
    el("td", { text: String(module.demos_a) }), el("td", { text: String(module.demos_b) })));
  append(root,
    el("table", { class: "table" }, el("caption", { text: `${a} against ${b}` }),
      el("thead", {}, el("tr", {}, ["Module", "Instructions", `Demos in ${a}`, `Demos in ${b}`].map((text) => el("th", { scope: "col", text })))),
      el("tbody", {}, rows)),
    diff.lines.length
      ? el("pre", { class: "diff", "aria-label": `Lines of the prompts only in ${a} (−) or only in ${b} (+)` },
        diff.lines.map((line) => el("span", { class: `diff-line kind-${{ " ": "same", "-": "removed", "+": "added", "@": "hunk" }[line.kind]}`,
          text: `${line.kind === "@" ? "" : `${line.kind} `}${line.text}\n` })))
      : el("p", { class: "muted", text: "Their prompts and demos are the same." }));
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
    const prompts = el("button", { type: "button", text: "Prompts", "aria-label": `Prompts of ${profile.name}` });
    prompts.addEventListener("click", () => showPrompts(profile.name, byId("profile-prompts")));
    const remove = el("button", {
      type: "button", class: "danger", text: "Remove", "aria-label": `Remove ${profile.name}`, disabled: profile.active,
      title: profile.active ? "The active profile cannot be removed: activate another first" : null,
    });
    remove.addEventListener("click", async () => {
      error.textContent = "";
      const sure = await confirm({
        title: "Remove profile?", yes: "Remove",
        text: `Remove ${profile.name}? Its prompts and demos go with it (export it first to keep a copy).`,
      });
      if (!sure) return;
      try {
        await deleteJSON(`/v1/profiles/${encodeURIComponent(profile.name)}`);
        byId("profiles-status").textContent = `Removed ${profile.name}.`;
        announce(byId("profiles-status").textContent);
        await loadProfiles();
      } catch (problem) {
        error.textContent = problem.message;
      }
    });
    body.append(el("tr", { "data-profile": profile.name },
      el("td", { text: profile.name }), el("td", { text: localTime(profile.created_at), title: profile.created_at }),
      el("td", { text: profile.note }), el("td", { text: profile.active ? "active" : "" }),
      el("td", {}, activate, " ", exportLink, " ", prompts, " ", remove)));
  }
  if (!list.profiles.length) body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "No profile registered yet." })));
  fillDiffChoices(list.profiles);
  return list.profiles;
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
    const problem = shapeProblem(payload, chosen.size);
    if (problem) {
      error.textContent = problem;
      return;
    }
    append(previewBox, el("p", { class: "muted", role: "status", text: "Checking the profile…" }));
    let checked;
    try {
      checked = await postJSON("/v1/profiles/check", text);
    } catch (refused) {
      clear(previewBox);
      error.textContent = `This profile cannot be imported: ${refused.message}`;
      return;
    }
    payloadText = text;
    append(clear(previewBox), el("h4", { text: "Preview" }), preview(payload, checked));
    if (!name.value) name.value = checked.name;
    button.disabled = false;
  });

  byId("import-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const target = name.value.trim();
    if (!NAME.test(target)) {
      error.textContent = "Name the profile to import into: 1-64 letters, digits, “_”, “.” or “-”, starting with a letter or digit.";
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

  byId("diff-form").addEventListener("submit", (event) => {
    event.preventDefault();
    showDiff();
  });
}
