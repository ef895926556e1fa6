// serpfuse judge: grade the focused row with 0/1/2, move with j/k, change query with n/p. A grade counts as
// given only once the server answers that it is on disk; until then the row stays as it was.
"use strict";
(function () {
  const list = document.querySelector(".judge-rows");
  if (!list) return;
  const rows = Array.from(list.querySelectorAll(".judge-row"));
  const q = Number(list.dataset.q);
  const names = { 0: "not relevant", 1: "relevant", 2: "highly relevant" };
  const status = document.getElementById("status");
  let at = Math.min(Number(list.dataset.start) || 0, rows.length - 1);

  function focusRow(i) {
    if (!rows.length) return;
    at = Math.max(0, Math.min(rows.length - 1, i));
    rows[at].focus({ preventScroll: true });
    rows[at].scrollIntoView({ block: "nearest" });
  }

  function say(text, bad) {
    status.textContent = text;
    status.classList.toggle("bad", Boolean(bad));
  }

  function mark(row, rel) {
    row.classList.remove("g0", "g1", "g2");
    row.classList.add("graded", "g" + rel);
    row.querySelectorAll(".grades button").forEach((b) => {
      b.setAttribute("aria-pressed", String(b.value === String(rel)));
    });
    row.querySelector(".grade-text").textContent = names[rel];
  }

  const pending = new Set(); // rows whose grade is on its way to the server
  const done = (i) => rows[i].classList.contains("graded") || pending.has(i);

  function nextUngraded(from) {
    for (let i = from + 1; i < rows.length; i++) if (!done(i)) return i;
    for (let i = 0; i < from; i++) if (!done(i)) return i;
    return -1;
  }

  async function grade(i, rel) {
    // move on at once, so fast typing grades row after row; a grade the server did not take comes back here
    pending.add(i);
    const next = nextUngraded(i);
    if (next >= 0) focusRow(next);
    let answer;
    try {
      const resp = await fetch("/grade", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ q: q, row: i, rel: rel }),
      });
      answer = await resp.json();
      if (!resp.ok) throw new Error(answer.error || "HTTP " + resp.status);
    } catch (err) {
      pending.delete(i);
      say("not saved: " + err.message, true);
      focusRow(i);
      return;
    }
    pending.delete(i);
    mark(rows[i], rel);
    // answers may come back out of order: a count only grows
    const show = (id, value) => {
      const el = document.getElementById(id);
      el.textContent = String(Math.max(Number(el.textContent) || 0, value));
    };
    show("graded", answer.graded);
    show("query-graded", answer.queryGraded);
    if (answer.queryGraded === answer.queryTotal) {
      say(document.getElementById("next") ? "every row of this query is graded: n for the next query"
                                            : "every row of this query is graded");
    } else {
      say("saved");
    }
  }

  rows.forEach((row, i) => {
    row.addEventListener("focusin", () => { at = i; });
    row.querySelector("form").addEventListener("submit", (event) => {
      event.preventDefault();
      const rel = Number((event.submitter || {}).value);
      if (rel in names) grade(i, rel);
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const key = event.key;
    if (key in names) grade(at, Number(key));
    else if (key === "j" || key === "ArrowDown") focusRow(at + 1);
    else if (key === "k" || key === "ArrowUp") focusRow(at - 1);
    else if (key === "n" && document.getElementById("next")) location.href = document.getElementById("next").href;
    else if (key === "p" && document.getElementById("prev")) location.href = document.getElementById("prev").href;
    else return;
    event.preventDefault();
  });

  focusRow(at);
})();
