// The Ask view: question, scope, progress, answer.
import { streamQuery } from "./api.js";
import { announce, append, byId, clear } from "./dom.js";
import { renderAnswer } from "./answer.js";
import { scopePicker } from "./scope.js";
import { stepper } from "./stepper.js";

// Runs one question, driving `progress`; resolves to the completed event (or throws the error's message).
export async function ask(body, progress) {
  let done = null;
  let failure = null;
  await streamQuery(body, ({ event, data }) => {
    progress.update(event, data);
    if (event === "completed") done = data;
    if (event === "error") failure = data.message;
  });
  if (failure !== null) throw new Error(failure);
  if (done === null) throw new Error("the answer stream ended early; try again");
  return done;
}

// The question and scope fields of a request from a form, or null after saying in `error` what is missing.
export function readQuestion(textarea, picker, error) {
  error.textContent = "";
  const question = textarea.value.trim();
  if (!question) {
    error.textContent = "Write a question first.";
    textarea.focus();
    return null;
  }
  try {
    return { question, ...picker.request() };
  } catch (problem) {
    error.textContent = problem.message;
    return null;
  }
}

export function setUpAsk() {
  const form = byId("ask-form");
  const question = byId("ask-question");
  const button = byId("ask-button");
  const error = byId("ask-error");
  const answer = byId("answer");
  const picker = scopePicker(byId("ask-scope"), "ask");

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = readQuestion(question, picker, error);
    if (body === null) return;
    clear(answer);
    const progress = stepper(byId("ask-progress"), "Question");
    button.disabled = true;
    announce("Question sent");
    try {
      const done = await ask(body, progress);
      append(answer, renderAnswer(done, "answer"));
      announce(`Answer ready with ${done.sections.length} section${done.sections.length === 1 ? "" : "s"}`);
    } catch (problem) {
      error.textContent = problem.message;
    } finally {
      button.disabled = false;
    }
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
}
