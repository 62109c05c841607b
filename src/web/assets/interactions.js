// interactions.js: what an agent asks a person, shown as forms. Questions
// (kind "question", model/questions.h: {"questions":[{id, question,
// options:[{id,label}], multi_select, allow_other}]}) are answered with
// {"answers":[{question_id, option_ids, other_text?}]}; confirmations (a plan
// waiting for approval) with {accepted, reason?}. Used by the session view
// and the task view.

import { post, enc } from "./api.js";
import { h, act, pretty, clip } from "./ui.js";
import { renderMarkdown } from "./markdown.js";

let formCount = 0;

// The questions of a payload, read leniently (other runtimes may send odd ones).
export function readQuestions(payload) {
  const out = [];
  const qs = payload && Array.isArray(payload.questions) ? payload.questions : null;
  if (!qs) return null;
  for (const q of qs) {
    if (!q || typeof q !== "object" || typeof q.id !== "string") continue;
    const options = [];
    for (const o of Array.isArray(q.options) ? q.options : []) {
      if (o && typeof o === "object" && typeof o.id === "string") {
        options.push({ id: o.id, label: typeof o.label === "string" ? o.label : o.id });
      }
    }
    out.push({
      id: q.id,
      text: typeof q.question === "string" ? q.question : "",
      options,
      multi: q.multi_select === true,
      other: q.allow_other === true,
    });
  }
  return out;
}

// A block for one interaction: a form while pending, its answer after.
// `inter` is {id, kind, payload, status, result}; onAnswered(result) is
// called after the server accepted an answer.
export function interactionBlock(inter, onAnswered) {
  if (inter.status && inter.status !== "pending") return resolvedBlock(inter);
  if (inter.kind === "confirmation") return confirmationForm(inter, onAnswered);
  const questions = readQuestions(inter.payload);
  if (questions) return questionForm(inter, questions, onAnswered);
  // Another kind: show what is asked (it is answered elsewhere).
  return h("div", { class: "interaction card", "data-test": "interaction", "data-interaction-id": inter.id },
    h("p", { class: "interaction-title" }, `The agent is waiting (${inter.kind || "interaction"})`),
    h("pre", { class: "json" }, clip(pretty(inter.payload), 4000)));
}

function questionForm(inter, questions, onAnswered) {
  const n = ++formCount;
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary", "data-test": "answer" }, "Answer");
  const form = h("form", {
    class: "interaction question card", "data-test": "question", "data-interaction-id": inter.id,
    "data-status": "pending", "aria-label": "Question from the agent",
  });
  const groups = [];
  questions.forEach((q, qi) => {
    const name = `q${n}-${qi}`;
    const fs = h("fieldset", { class: "question-item", "data-question-id": q.id });
    fs.appendChild(h("legend", { class: "question-text" }, q.text || "The agent asks:"));
    const boxes = [];
    q.options.forEach((o, oi) => {
      const inputId = `${name}-o${oi}`;
      const input = h("input", {
        type: q.multi ? "checkbox" : "radio", name, id: inputId, value: o.label, "data-option-id": o.id,
      });
      boxes.push({ input, option: o });
      fs.appendChild(h("div", { class: "choice" }, input, h("label", { for: inputId }, o.label)));
    });
    let other = null;
    if (q.other) {
      const otherId = `${name}-other`;
      other = h("input", {
        type: "text", id: otherId, name: `${name}-other`, "data-test": "question-other", autocomplete: "off",
        placeholder: q.options.length ? "Something else…" : "Your answer",
      });
      fs.appendChild(h("div", { class: "other" },
        h("label", { for: otherId }, q.options.length ? "Other" : "Answer"), other));
      // One choice: typing an answer of your own replaces the option, and back.
      if (!q.multi) {
        other.addEventListener("input", () => { if (other.value) for (const b of boxes) b.input.checked = false; });
        for (const b of boxes) b.input.addEventListener("change", () => { if (b.input.checked) other.value = ""; });
      }
    }
    groups.push({ q, boxes, other });
    form.appendChild(fs);
  });
  form.appendChild(error);
  form.appendChild(h("div", { class: "actions" }, submit));

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    error.hidden = true;
    const answers = [];
    for (const g of groups) {
      const ids = g.boxes.filter((b) => b.input.checked).map((b) => b.option.id);
      const a = { question_id: g.q.id, option_ids: ids };
      const text = g.other ? g.other.value.trim() : "";
      if (text) a.other_text = text;
      if (!ids.length && !text) {
        error.textContent = g.q.options.length ? `Choose an answer to “${g.q.text}”.` : `Type an answer to “${g.q.text}”.`;
        error.hidden = false;
        return;
      }
      answers.push(a);
    }
    act(submit, async () => {
      try {
        await post(`/v1/interactions/${enc(inter.id)}/answer`, { answers });
      } catch (ex) {
        error.textContent = ex.message;
        error.hidden = false;
        throw ex;
      }
      const result = { answers };
      const done = resolvedBlock({ ...inter, status: "answered", result });
      form.replaceWith(done);
      if (onAnswered) onAnswered(result, done);
    });
  });
  return form;
}

function confirmationForm(inter, onAnswered) {
  const n = ++formCount;
  const p = inter.payload && typeof inter.payload === "object" ? inter.payload : {};
  const reason = h("textarea", { name: "reason", id: `confirm-reason-${n}`, rows: "2", placeholder: "What should change" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const accept = h("button", { type: "button", class: "primary", "data-test": "confirm-accept" }, "Approve");
  const reject = h("button", { type: "button", class: "danger", "data-test": "confirm-reject" }, "Reject");
  const form = h("form", {
    class: "interaction confirmation card", "data-test": "confirmation", "data-interaction-id": inter.id,
    "data-status": "pending",
  },
    h("p", { class: "interaction-title" },
      `The agent asks to approve its plan${p.number ? ` (revision ${p.number})` : ""}`),
    typeof p.content === "string" ? h("div", { class: "md plan-content" }, renderMarkdown(clip(p.content, 50000))) : null,
    h("label", { for: `confirm-reason-${n}` }, "Reason (needed to reject)"), reason, error,
    h("div", { class: "actions" }, accept, reject));
  const decide = (button, accepted) => act(button, async () => {
    error.hidden = true;
    const body = { accepted };
    if (!accepted) {
      if (!reason.value.trim()) {
        error.textContent = "Say what should change to reject the plan.";
        error.hidden = false;
        reason.focus();
        return;
      }
      body.reason = reason.value.trim();
    } else if (reason.value.trim()) {
      body.reason = reason.value.trim();
    }
    try {
      await post(`/v1/interactions/${enc(inter.id)}/answer`, body);
    } catch (ex) {
      error.textContent = ex.message;
      error.hidden = false;
      throw ex;
    }
    const done = resolvedBlock({ ...inter, status: "answered", result: body });
    form.replaceWith(done);
    if (onAnswered) onAnswered(body, done);
  });
  accept.addEventListener("click", () => decide(accept, true));
  reject.addEventListener("click", () => decide(reject, false));
  form.addEventListener("submit", (e) => e.preventDefault());
  return form;
}

// The answer of a question as words: the chosen labels and the other text.
function answerWords(questions, result) {
  const byId = new Map();
  for (const q of questions || []) byId.set(q.id, q);
  const answers = result && Array.isArray(result.answers) ? result.answers : [];
  return answers.map((a) => {
    const q = byId.get(a && a.question_id);
    const labels = (Array.isArray(a.option_ids) ? a.option_ids : []).map((id) => {
      const o = q ? q.options.find((x) => x.id === id) : null;
      return o ? o.label : String(id);
    });
    if (a.other_text) labels.push(String(a.other_text));
    return { q, text: labels.join(", ") };
  });
}

export function resolvedBlock(inter) {
  const cancelled = inter.status === "cancelled";
  const block = h("div", {
    class: `interaction resolved card${cancelled ? " cancelled" : ""}`, "data-test": inter.kind === "confirmation" ? "confirmation" : "question",
    "data-interaction-id": inter.id, "data-status": inter.status || "answered",
  });
  if (inter.kind === "confirmation") {
    const r = inter.result && typeof inter.result === "object" ? inter.result : {};
    const p = inter.payload && typeof inter.payload === "object" ? inter.payload : {};
    block.appendChild(h("p", { class: "interaction-title" }, `Plan${p.number ? ` revision ${p.number}` : ""}`));
    block.appendChild(h("p", { "data-test": "question-answer" },
      cancelled ? "Cancelled" : r.accepted === true ? "Approved" : `Rejected${r.reason ? `: ${r.reason}` : ""}`));
    return block;
  }
  const questions = readQuestions(inter.payload);
  if (cancelled || !questions) {
    block.appendChild(h("p", { class: "interaction-title" },
      questions && questions[0] ? questions[0].text : `Interaction (${inter.kind})`));
    block.appendChild(h("p", { "data-test": "question-answer", class: "muted" },
      cancelled ? "Cancelled: no answer is needed any more." : clip(pretty(inter.result), 2000)));
    return block;
  }
  for (const { q, text } of answerWords(questions, inter.result)) {
    block.appendChild(h("p", { class: "interaction-title" }, q ? q.text : "Question"));
    block.appendChild(h("p", { class: "answer" }, h("span", { class: "muted" }, "Answer: "),
      h("strong", { "data-test": "question-answer" }, text || "(empty)")));
  }
  return block;
}

