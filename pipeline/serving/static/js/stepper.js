// A progress stepper driven by the stream's events, and a log of every event as it arrived.
import { append, clear, el } from "./dom.js";

const STEPS = [
  ["decomposing", "Decompose"],
  ["retrieving", "Retrieve"],
  ["filtering", "Filter"],
  ["generating", "Answer"],
  ["completed", "Done"],
];
// Events sent within a stage: the step they belong to.
const WITHIN = { decomposed: "decomposing", generating_subquestion: "generating" };

function describe(event, data) {
  switch (event) {
    case "decomposing":
      return "Decomposing the question";
    case "decomposed":
      return `Decomposed into ${data.sub_questions.length} sub-question${data.sub_questions.length === 1 ? "" : "s"}`;
    case "retrieving":
      return "Retrieving passages";
    case "filtering":
      return "Scoring passages for relevance";
    case "generating":
      return "Writing the answer";
    case "generating_subquestion":
      return `Answering sub-question ${data.index + 1}: ${data.sub_question}`;
    case "completed":
      return "Answer ready";
    case "error":
      return `Failed: ${data.message}`;
    default:
      return event;
  }
}

export function stepper(root, label) {
  const items = new Map();
  const list = el("ol", { class: "stepper", "aria-label": `${label} steps` });
  for (const [phase, name] of STEPS) {
    const state = el("span", { class: "visually-hidden", text: "waiting" });
    const item = el("li", { "data-step": phase, "data-state": "waiting" }, el("span", { class: "step-name", text: name }), " ", state);
    items.set(phase, { item, state, name });
    list.append(item);
  }
  const log = el("ol", { class: "progress-log", "aria-label": `${label} events` });
  const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
  append(clear(root), el("div", { class: "progress" }, list, status, el("details", {}, el("summary", { text: "Events" }), log)));
  let sections = 0;

  const mark = (phase, state) => {
    const step = items.get(phase);
    step.item.dataset.state = state;
    step.state.textContent = state === "active" ? "in progress" : state;
    if (state === "active") step.item.setAttribute("aria-current", "step");
    else step.item.removeAttribute("aria-current");
  };

  return {
    update(event, data) {
      log.append(el("li", { "data-phase": event, text: describe(event, data) }));
      status.textContent = describe(event, data);
      if (event === "decomposed") sections = data.sub_questions.length;
      const step = WITHIN[event] ?? event;
      const at = STEPS.findIndex(([phase]) => phase === step);
      if (at < 0) {
        const active = [...items.entries()].find(([, step]) => step.item.dataset.state === "active");
        if (active) mark(active[0], "failed");
        return;
      }
      STEPS.forEach(([phase], index) => {
        if (index < at) mark(phase, "done");
      });
      if (event === "completed") mark(event, "done");
      else mark(step, "active");
      if (event === "generating_subquestion") {
        items.get(step).item.querySelector(".step-name").textContent = `Answer ${data.index + 1} of ${sections}`;
      }
    },
    phases() {
      return [...log.children].map((item) => item.dataset.phase);
    },
  };
}
