// The Compare view: one question answered by two programs side by side, sections aligned by sub-question.
import { getJSON } from "./api.js";
import { announce, append, byId, clear, el } from "./dom.js";
import { ask, readQuestion } from "./ask.js";
import { extras, metaLine, sectionCard, sourcesOf } from "./answer.js";
import { scopePicker } from "./scope.js";
import { stepper } from "./stepper.js";

const key = (section) => section.sub_question.toLocaleLowerCase().replace(/\s+/g, " ").trim();

// Rows of [left section or null, right section or null]: the same sub-question side by side, in the
// left answer's order, then the right answer's sub-questions the left one did not ask.
export function alignSections(left, right) {
  const unused = new Map();
  right.forEach((section, index) => {
    if (!unused.has(key(section))) unused.set(key(section), index);
  });
  const taken = new Set();
  const rows = left.map((section) => {
    const index = unused.get(key(section));
    if (index === undefined) return [section, null];
    unused.delete(key(section));
    taken.add(index);
    return [section, right[index]];
  });
  right.forEach((section, index) => {
    if (!taken.has(index)) rows.push([null, section]);
  });
  return rows;
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

function side(label, done, prefix) {
  return { label, done, ctx: { prefix, historyId: done.history_id, sources: sourcesOf(done.history_id) } };
}

function render(left, right) {
  const root = clear(byId("compare-result"));
  const head = (one) => el("div", { class: "ab-head" }, el("h3", { text: one.label }), metaLine(one.done), extras(one.done));
  root.append(el("div", { class: "ab-row ab-top" }, head(left), head(right)));
  for (const [a, b] of alignSections(left.done.sections, right.done.sections)) {
    const cell = (one, section) => section
      ? sectionCard(one.ctx, section)
      : el("div", { class: "card empty", text: "This program did not ask this sub-question." });
    root.append(el("div", { class: "ab-row", "data-sub-question": (a || b).sub_question }, cell(left, a), cell(right, b)));
  }
}

export function setUpCompare() {
  const picker = scopePicker(byId("compare-scope"), "compare");
  const form = byId("compare-form");
  const error = byId("compare-error");
  const button = byId("compare-button");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = readQuestion(byId("compare-question"), picker, error);
    if (body === null) return;
    const choices = [byId("compare-left"), byId("compare-right")].map((select) => ({
      value: select.value, label: select.selectedOptions[0] ? select.selectedOptions[0].textContent : select.value,
    }));
    const progressRoot = clear(byId("compare-progress"));
    clear(byId("compare-result"));
    const runs = choices.map((choice, index) => {
      const box = el("div", { class: "ab-progress" }, el("h3", { text: choice.label }));
      progressRoot.append(box);
      const holder = el("div");
      box.append(holder);
      const progress = stepper(holder, index ? "Right" : "Left");
      return ask({ ...body, ...programBody(choice.value) }, progress);
    });
    button.disabled = true;
    try {
      const [left, right] = await Promise.all(runs);
      render(side(choices[0].label, left, "left"), side(choices[1].label, right, "right"));
      announce("Both answers are ready");
    } catch (problem) {
      append(error, problem.message);
    } finally {
      button.disabled = false;
    }
  });
}
