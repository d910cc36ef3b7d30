// The Ask view: question, scope, progress, answer. A question runs as a job on the server: the page polls it,
// shows its stage, time and estimate, can cancel it, and finds it again after a reload or a closed tab.
import { ApiError, getJSON, postJSON } from "./api.js";
import { announce, append, byId, clear, clockTime, el } from "./dom.js";
import { renderAnswer } from "./answer.js";
import { scopePicker } from "./scope.js";
import { stepper } from "./stepper.js";

// The job this browser is following, kept across reloads and closed tabs.
const JOB_KEY = "scoperag.job";
const POLL_MS = 600;
const STAGES = {
  decomposing: "Decomposing the question",
  retrieving: "Retrieving passages",
  filtering: "Scoring passages",
  generating: "Writing the answer",
};

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

// What the status line says about a running job: stage, time taken and time left.
export function jobLine(job) {
  const parts = [STAGES[job.stage] || "Planning", `${clockTime(job.elapsed)} elapsed`];
  if (job.cancelling) parts.push("stopping: no LM call starts after the one under way");
  else if (!job.estimate) parts.push("no estimate yet: no question was answered here with this LM");
  else {
    const basis = `the last ${job.estimate.questions} question${job.estimate.questions === 1 ? "" : "s"} answered here`;
    parts.push(job.estimate.overdue
      ? `taking longer than ${basis}; what follows took about ${clockTime(job.estimate.seconds_left)}`
      : `about ${clockTime(job.estimate.seconds_left)} left (measured on ${basis})`);
  }
  return parts.join(" · ");
}

// How a job that ended says so on its status line.
function endedLine(job) {
  const how = { done: "Answered", cancelled: "Cancelled", failed: "Failed" }[job.status] || "Ended";
  return `${how} in ${clockTime(job.elapsed)}`;
}

// What an ended job gives: its completed event, or a message saying why there is none.
function outcome(job, events) {
  const last = events.length ? events[events.length - 1] : null;
  if (job.status === "done" && last && last.phase === "completed") return { done: last };
  if (job.status === "cancelled") {
    return { cancelled: `Cancelled after ${clockTime(job.elapsed)}; no LM call started after the stop. It is in History.` };
  }
  const failed = events.find((event) => event.phase === "error");
  return { failed: failed ? failed.message : "The question failed; see History for its trace." };
}

// Polls job `jobId` until it ends: `onPoll(job)` gets each state read, its new events in `job.events`, and stops
// the polling by returning false. Resolves to the last state read.
async function follow(jobId, onPoll) {
  let after = -1;
  for (;;) {
    const job = await getJSON(`/v1/jobs/${encodeURIComponent(jobId)}?after=${after}`);
    if (job.events.length) after = job.events[job.events.length - 1].seq;
    if (onPoll(job) === false || job.status !== "running") return job;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

// Runs one question as a job (the Compare view), driving `progress` and the status `line`; `started(jobId)` is
// told its id (to cancel it). Resolves to the completed event; rejects saying how the question ended otherwise.
// `ended(job)` hears the job as it ended (its program and which steps the LM ran).
export async function runJob(body, progress, line, started, ended = () => {}) {
  const { job_id: jobId } = await postJSON("/v1/jobs", body);
  started(jobId);
  const events = [];
  const job = await follow(jobId, (now) => {
    for (const event of now.events) {
      progress.update(event.phase, event);
      events.push(event);
    }
    line.textContent = now.status === "running" ? jobLine(now) : endedLine(now);
  });
  ended(job);
  const result = outcome(job, events);
  if (result.done) return result.done;
  throw new Error(result.cancelled || result.failed);
}

let following = null; // the job id this page is polling

function finish(job, events, answer, error) {
  const ended = outcome(job, events);
  if (ended.done) {
    append(answer, renderAnswer(ended.done, "answer"));
    announce(`Answer ready with ${ended.done.sections.length} section${ended.done.sections.length === 1 ? "" : "s"}`);
  } else if (ended.cancelled) {
    append(answer, el("p", { class: "notice cancelled", role: "status", text: ended.cancelled }));
    announce("Question cancelled");
  } else {
    error.textContent = ended.failed;
  }
}

// Follows job `jobId` until it ends: progress, status line, cancel, then its answer.
async function watch(jobId) {
  const answer = clear(byId("answer"));
  const error = byId("ask-error");
  const line = byId("ask-job-line");
  const cancel = byId("ask-cancel");
  const button = byId("ask-button");
  error.textContent = "";
  following = jobId;
  localStorage.setItem(JOB_KEY, jobId);
  const progress = stepper(byId("ask-progress"), "Question");
  const events = [];
  byId("ask-job").hidden = false;
  byId("ask-job").dataset.jobId = jobId;
  cancel.hidden = false;
  cancel.disabled = false;
  button.disabled = true;
  try {
    const job = await follow(jobId, (now) => {
      if (following !== jobId) return false; // another question took over this view
      for (const event of now.events) {
        progress.update(event.phase, event);
        events.push(event);
      }
      byId("ask-job").dataset.status = now.status;
      if (now.status === "running") {
        line.textContent = jobLine(now);
        if (now.cancelling) cancel.disabled = true;
      }
      return true;
    });
    if (following !== jobId) return;
    line.textContent = endedLine(job);
    localStorage.removeItem(JOB_KEY);
    finish(job, events, answer, error);
  } catch (problem) {
    if (problem instanceof ApiError && problem.status === 404) {
      localStorage.removeItem(JOB_KEY);
      error.textContent = "This question is no longer on the server (it was restarted); look for it in History.";
    } else {
      error.textContent = problem.message;
    }
  } finally {
    if (following === jobId) {
      cancel.hidden = true;
      button.disabled = false;
    }
  }
}

// Shows job `jobId` in the Ask view (from History's running questions, or after a reload).
export async function attach(jobId) {
  try {
    const job = await getJSON(`/v1/jobs/${encodeURIComponent(jobId)}?after=-1`);
    byId("ask-question").value = job.question;
  } catch {
    // watch() says what became of it
  }
  await watch(jobId);
}

export function setUpAsk() {
  const form = byId("ask-form");
  const question = byId("ask-question");
  const error = byId("ask-error");
  const picker = scopePicker(byId("ask-scope"), "ask");

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = readQuestion(question, picker, error);
    if (body === null) return;
    clear(byId("answer"));
    byId("ask-button").disabled = true;
    let job;
    try {
      job = await postJSON("/v1/jobs", body);
    } catch (problem) {
      error.textContent = problem.message;
      byId("ask-button").disabled = false;
      return;
    }
    announce("Question sent; it keeps running if you leave this page");
    await watch(job.job_id);
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  byId("ask-cancel").addEventListener("click", async () => {
    const jobId = byId("ask-job").dataset.jobId;
    byId("ask-cancel").disabled = true;
    try {
      const job = await postJSON(`/v1/jobs/${encodeURIComponent(jobId)}/cancel`);
      byId("ask-job-line").textContent = jobLine(job);
      announce("Stopping the question");
    } catch (problem) {
      error.textContent = problem.message;
    }
  });
  const kept = localStorage.getItem(JOB_KEY);
  if (kept) attach(kept);
}
