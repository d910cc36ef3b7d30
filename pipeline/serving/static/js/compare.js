// The Compare view: one question answered by two programs side by side, sections aligned by sub-question, what
// differs highlighted (answer lines, evidence only one side quotes), and each side's cost, MLflow run and prompts.
import { getJSON, health, postJSON } from "./api.js";
import { announce, append, byId, clear, el, externalLink } from "./dom.js";
import { readQuestion, runJob } from "./ask.js";
import { extras, metaLine, sectionCard, sourcesOf } from "./answer.js";
import { showPrompts } from "./profiles.js";
import { scopePicker } from "./scope.js";
import { stepper } from "./stepper.js";

const normal = (text) => String(text || "").toLocaleLowerCase().replace(/\s+/g, " ").trim();
const key = (section) => normal(section.sub_question);

// Words that say little about what a sub-question asks.
const STOPWORDS = new Set(("a an and are as at be by can do does for from has have how in is it its of on or said "
  + "say says that the their there this to under was what when where which who whom whose why will with").split(" "));
// Sub-questions worded differently are set side by side when this share of their words is common to both.
const SIMILAR = 0.25;

function contentWords(section) {
  return new Set(key(section).split(/[^\p{L}\p{N}]+/u).filter((word) => word && !STOPWORDS.has(word)));
}

// The share of two word sets' union that both hold (0 when either is empty).
function overlap(a, b) {
  const shared = [...a].filter((word) => b.has(word)).length;
  const union = new Set([...a, ...b]).size;
  return union ? shared / union : 0;
}

// Rows of [left section or null, right section or null], in the left answer's order, then the right answer's
// sections left over: each left section beside the right one asking the same sub-question, else beside the
// most similar one left (by the words they share, at least SIMILAR of them), else alone.
export function alignSections(left, right) {
  const partner = new Map(); // left index -> right index
  const taken = new Set();
  left.forEach((section, index) => {
    const same = right.findIndex((other, at) => !taken.has(at) && key(other) === key(section));
    if (same >= 0) {
      partner.set(index, same);
      taken.add(same);
    }
  });
  const pairs = [];
  left.forEach((section, index) => {
    if (partner.has(index)) return;
    const words = contentWords(section);
    right.forEach((other, at) => {
      if (taken.has(at)) return;
      const score = overlap(words, contentWords(other));
      if (score >= SIMILAR) pairs.push({ index, at, score });
    });
  });
  pairs.sort((a, b) => b.score - a.score || a.index - b.index || a.at - b.at);
  for (const { index, at } of pairs) {
    if (partner.has(index) || taken.has(at)) continue;
    partner.set(index, at);
    taken.add(at);
  }
  const rows = left.map((section, index) => [section, partner.has(index) ? right[partner.get(index)] : null]);
  right.forEach((section, at) => {
    if (!taken.has(at)) rows.push([null, section]);
  });
  return rows;
}

// What differs between two aligned sections: the answer line (or its status), and the quotes only one side has.
export function differences(a, b) {
  if (!a || !b) return { answer: true, onlyLeft: new Set(), onlyRight: new Set() };
  const quotes = (section) => new Set((section.evidence || []).map((quote) => normal(quote.text)));
  const left = quotes(a);
  const right = quotes(b);
  return {
    answer: a.status !== b.status || normal(a.answer) !== normal(b.answer),
    onlyLeft: new Set([...left].filter((quote) => !right.has(quote))),
    onlyRight: new Set([...right].filter((quote) => !left.has(quote))),
  };
}

function programBody(choice) {
  if (choice === "uncompiled") return { uncompiled: true };
  if (choice.startsWith("profile:")) return { profile: choice.slice("profile:".length) };
  return {};
}

async function fillPrograms(selects) {
  const options = [["current", "The program serving now"], ["uncompiled", "Uncompiled program"]];
  try {
    const list = await getJSON("/v1/profiles");
    for (const profile of list.profiles) options.push([`profile:${profile.name}`, `Profile ${profile.name}${profile.active ? " (active)" : ""}`]);
  } catch {
    // no profile registry on this server: the two built-in choices remain
  }
  for (const select of selects) {
    const keep = select.value;
    clear(select);
    for (const [value, label] of options) select.append(el("option", { value, text: label }));
    if (options.some(([value]) => value === keep)) select.value = keep;
  }
  if (selects[0].value === selects[1].value && options.length > 1) selects[1].value = options[1][0];
}

export async function loadCompare() {
  await fillPrograms([byId("compare-left"), byId("compare-right")]);
}

// Where a side's program came from: its MLflow run (a link when the server names its tracking server) and prompts.
async function provenance(choice) {
  const box = el("p", { class: "provenance muted" });
  let server;
  try {
    server = await health();
  } catch {
    return box;
  }
  let profile = choice.startsWith("profile:") ? choice.slice("profile:".length) : null;
  let runId = null;
  if (choice === "current" && server.program !== "uncompiled") {
    profile = server.program.profile;
    runId = server.program.run_id;
  }
  if (profile) {
    try {
      runId = (await getJSON(`/v1/profiles/${encodeURIComponent(profile)}`)).run_id;
    } catch {
      // an export served without a profile: the health's run id stands
    }
  }
  if (choice === "uncompiled" || (choice === "current" && server.program === "uncompiled")) {
    box.append("Uncompiled: no run, the signatures' own instructions.");
    return box;
  }
  if (runId && server.tracking) {
    box.append("MLflow run ", externalLink(`${server.tracking}/#/runs/${encodeURIComponent(runId)}`, runId.slice(0, 8), `MLflow run ${runId}`));
  } else if (runId) {
    box.append(`MLflow run ${runId.slice(0, 8)} (start the server with --tracking-uri to link it)`);
  } else {
    box.append("No MLflow run recorded for this program.");
  }
  if (profile) {
    const prompts = el("button", { type: "button", class: "link-button", text: "Prompts", "aria-label": `Prompts of profile ${profile}` });
    prompts.addEventListener("click", () => showPrompts(profile, byId("compare-prompts")));
    box.append(" · ", prompts);
  }
  return box;
}

function side(label, choice, done, prefix, steps) {
  return { label, choice, done, steps, ctx: { prefix, historyId: done.history_id, sources: sourcesOf(done.history_id) } };
}

function markDifferences(card, differs, only) {
  if (!card) return;
  if (differs) {
    card.classList.add("differs");
    const line = card.querySelector(".answer-line, .not-found, .error");
    if (line) line.classList.add("diff");
  }
  for (const quote of card.querySelectorAll(".evidence .quote")) {
    const text = normal(quote.firstChild ? quote.firstChild.textContent : quote.textContent);
    if ([...only].some((wanted) => text === wanted)) quote.classList.add("only-here");
  }
}

function render(left, right) {
  const root = clear(byId("compare-result"));
  const head = (one) => {
    const steps = one.steps ? el("p", { class: "muted steps", text: `Steps: ${one.steps}` }) : null;
    const box = el("div", { class: "ab-head" }, el("h3", { text: one.label }), steps, metaLine(one.done), extras(one.done));
    provenance(one.choice).then((line) => box.append(line));
    return box;
  };
  root.append(el("div", { class: "ab-row ab-top" }, head(left), head(right)));
  const summary = el("p", { class: "diff-summary", role: "status" });
  root.append(summary);
  let differing = 0;
  const rows = alignSections(left.done.sections, right.done.sections);
  for (const [a, b] of rows) {
    const cell = (one, section) => section
      ? sectionCard(one.ctx, section)
      : el("div", { class: "card empty", text: "This program did not ask this sub-question." });
    const found = differences(a, b);
    const [first, second] = [cell(left, a), cell(right, b)];
    if (a && b) {
      markDifferences(first, found.answer, found.onlyLeft);
      markDifferences(second, found.answer, found.onlyRight);
    }
    const differs = found.answer || found.onlyLeft.size > 0 || found.onlyRight.size > 0;
    if (differs) differing += 1;
    root.append(el("div", { class: `ab-row${differs ? " differs" : ""}`, "data-sub-question": (a || b).sub_question,
      "data-differs": differs ? "true" : "false" }, first, second));
  }
  summary.textContent = differing
    ? `${differing} of ${rows.length} section${rows.length === 1 ? "" : "s"} differ: differing answer lines are outlined, quotes only one side gives are marked.`
    : "Both programs give the same answer lines and quotes.";
  root.append(el("div", { id: "compare-prompts", class: "prompts-panel", hidden: true }));
}

export function setUpCompare() {
  const picker = scopePicker(byId("compare-scope"), "compare");
  const form = byId("compare-form");
  const error = byId("compare-error");
  const button = byId("compare-button");
  const cancel = byId("compare-cancel");
  let jobs = []; // the ids of the two questions running
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = readQuestion(byId("compare-question"), picker, error);
    if (body === null) return;
    const choices = [byId("compare-left"), byId("compare-right")].map((select) => ({
      value: select.value, label: select.selectedOptions[0] ? select.selectedOptions[0].textContent : select.value,
    }));
    const progressRoot = clear(byId("compare-progress"));
    clear(byId("compare-result"));
    jobs = [];
    const steps = ["", ""]; // which steps each side's program ran by the LM, as its job says
    const runs = choices.map((choice, index) => {
      const line = el("p", { class: "job-line" });
      const holder = el("div");
      progressRoot.append(el("div", { class: "ab-progress" }, el("h3", { text: choice.label }), line, holder));
      const progress = stepper(holder, index ? "Right" : "Left");
      return runJob({ ...body, ...programBody(choice.value) }, progress, line, (jobId) => jobs.push(jobId),
        (job) => { steps[index] = job.steps || ""; });
    });
    button.disabled = true;
    cancel.hidden = false;
    cancel.disabled = false;
    try {
      const [left, right] = await Promise.all(runs);
      render(side(choices[0].label, choices[0].value, left, "left", steps[0]),
        side(choices[1].label, choices[1].value, right, "right", steps[1]));
      announce("Both answers are ready");
    } catch (problem) {
      append(error, problem.message);
    } finally {
      await Promise.allSettled(runs); // a side that failed first leaves the other to end
      button.disabled = false;
      cancel.hidden = true;
    }
  });
  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    const results = await Promise.allSettled(jobs.map((jobId) => postJSON(`/v1/jobs/${encodeURIComponent(jobId)}/cancel`)));
    const refused = results.find((result) => result.status === "rejected");
    if (refused) append(error, refused.reason.message);
    else announce("Stopping both questions");
  });
}
