"use strict";
// The assessor's page. Untrusted text goes in with textContent only, never innerHTML.
(function () {
  const { api, requestId, detail, message } = window.judged;
  const $ = (id) => document.getElementById(id);
  const root = $("judge");
  const evidenceRequired = root.dataset.evidenceRequired === "yes";
  const minGrade = Number(root.dataset.minGrade);
  const grades = new Set(Array.from(document.querySelectorAll("button.grade"), (b) => Number(b.dataset.grade)));
  let current = null;
  let busy = false;

  function render(p) {
    current = p;
    $("pair-view").hidden = !p;
    $("done").hidden = !!p;
    $("query").textContent = p ? p.query : "";
    $("doc-title").textContent = p ? p.title : "";
    $("doc-text").textContent = p ? p.text : "";
    $("evidence").value = "";
  }

  async function refreshProgress() {
    const r = await api("GET", "/api/progress");
    if (r.ok) {
      const p = await r.json();
      $("progress").textContent = `graded ${p.graded} · skipped ${p.skipped} · open ${p.open} of ${p.assigned} assigned so far`;
    }
  }

  async function loadNext() {
    const r = await api("GET", "/api/next");
    if (r.status === 204) render(null);
    else if (r.ok) render(await r.json());
    else message(await detail(r), true);
    await refreshProgress();
  }

  async function post(url, body, done) {
    if (busy) return;
    busy = true;
    let r;
    try {
      r = await api("POST", url, body);
    } catch (e) {
      message("Not saved (network): " + e.message, true);
      return;
    } finally { busy = false; }
    if (!r.ok) { message(await detail(r), true); return; }
    current = null;  // answered: no key may grade this pair again until the next one is shown
    message(done(await r.json()));
    await loadNext();
  }

  function grade(g) {
    if (!current) return;
    const evidence = $("evidence").value.trim();
    if (evidenceRequired && g > minGrade && !evidence) {
      message(`Evidence required for grade ${g}: select a passage and press q, or press e and write a note.`, true);
      return;
    }
    const pair = current;
    post("/api/judgments", { qid: pair.qid, docid: pair.docid, grade: g, evidence, request_id: requestId() },
      (j) => `Saved grade ${j.grade} for ${pair.docid}${j.revision > 1 ? " (revision " + j.revision + ")" : ""}.`);
  }

  function skip() {
    if (!current) return;
    const pair = current;
    post("/api/skip", { qid: pair.qid, docid: pair.docid, request_id: requestId() }, () => `Skipped ${pair.docid}.`);
  }

  function undo() {
    post("/api/undo", { request_id: requestId() },
      (j) => `Undone: ${j.docid} is back; judge it again (the earlier judgment stays in the history).`);
  }

  function quote() {
    const sel = window.getSelection();
    const text = sel ? sel.toString().trim() : "";
    if (!text || !$("doc-text").contains(sel.anchorNode)) { message("Select a passage of the document first.", true); return; }
    const box = $("evidence");
    box.value = (box.value ? box.value + "\n" : "") + "“" + text + "”";
    message("Quoted.");
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") { t.blur(); ev.preventDefault(); }
      return;
    }
    if (/^[0-9]$/.test(ev.key) && grades.has(Number(ev.key))) { ev.preventDefault(); grade(Number(ev.key)); }
    else if (ev.key === "e") { ev.preventDefault(); $("evidence").focus(); }
    else if (ev.key === "q") { ev.preventDefault(); quote(); }
    else if (ev.key === "s") { ev.preventDefault(); skip(); }
    else if (ev.key === "u") { ev.preventDefault(); undo(); }
  });
  document.querySelectorAll("button.grade").forEach((b) => b.addEventListener("click", () => grade(Number(b.dataset.grade))));
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  $("quote").addEventListener("click", quote);
  loadNext();
})();
