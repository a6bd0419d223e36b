"use strict";
// The assessor's page. Untrusted text goes in with textContent / text nodes only, never
// innerHTML. The document is split into sentences (each its own bidi-isolated span, so a
// right-to-left override in one cannot reverse the next); j/k move a highlighted passage
// by sentence, J/K extend or shrink it, q quotes it; query terms are marked (h toggles).
(function () {
  if (!window.judged.sessionOk) return;        // common.js said why: nothing runs under another session
  const { api, requestId, detail, message, saveDraft, loadDraft, dropDraft } = window.judged;
  const $ = (id) => document.getElementById(id);
  const root = $("judge");
  const evidenceRequired = root.dataset.evidenceRequired === "yes";
  const minGrade = Number(root.dataset.minGrade);
  const grades = new Set(Array.from(document.querySelectorAll("button.grade"), (b) => Number(b.dataset.grade)));
  const STOP = new Set(("the and for with from that this what which who whom whose when where why how are was were " +
    "been being have has had does did not but can could should would will shall may might must into onto upon about " +
    "than then them they their there these those its it's our your you his her him she any all some such very more " +
    "most other only own same too of on in at by to an a is be do as or if no so up").split(" "));
  let current = null;
  let busy = false;
  let sentences = [];          // the sentence spans of the document shown
  let passage = null;          // [first, last] sentence index of the highlighted passage
  let highlight = true;
  const shownAt = { t: 0 };

  // --- the document: sentences and query terms ---------------------------------------------
  function splitSentences(text) {
    // a sentence ends after . ! ? (and closing quotes or brackets) followed by space, or at a line break
    const out = [];
    const re = /[.!?]+["'”’)\]]*\s+|\n+/g;
    let start = 0, m;
    while ((m = re.exec(text)) !== null) {
      const end = m.index + m[0].length;
      if (end > start) out.push(text.slice(start, end));
      start = end;
    }
    if (start < text.length) out.push(text.slice(start));
    return out;
  }

  function queryTerms(p) {
    const words = ((p.query || "") + " " + ((p.topic && p.topic.title) || "")).toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
    // a plural's stem, so "masks" also marks "mask" (and "mask" marks "masks")
    const stems = words.filter((w) => w.length >= 3 && !STOP.has(w)).map((w) => (w.length > 4 && /[^s]s$/.test(w) ? w.slice(0, -1) : w));
    return Array.from(new Set(stems));
  }

  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function appendMarked(parent, text, termRe) {
    if (!termRe) { parent.appendChild(document.createTextNode(text)); return; }
    let last = 0, m;
    termRe.lastIndex = 0;
    while ((m = termRe.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      const mark = document.createElement("mark");
      mark.className = "term";
      mark.textContent = m[0];
      parent.appendChild(mark);
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function renderText(p) {
    const box = $("doc-text");
    box.replaceChildren();
    sentences = [];
    passage = null;
    if (!p) return;
    const terms = queryTerms(p);
    const termRe = terms.length ? new RegExp("(?<![\\p{L}\\p{N}])(?:" + terms.map(escapeRe).join("|") + ")(?:s|es)?(?![\\p{L}\\p{N}])", "giu") : null;
    splitSentences(p.text || "").forEach((s, i) => {
      const span = document.createElement("span");
      span.className = "sentence";
      span.dir = "auto";                 // isolates it: its bidi controls end with it
      span.dataset.index = String(i);
      appendMarked(span, s, termRe);
      box.appendChild(span);
      sentences.push(span);
    });
    const title = $("doc-title");
    title.replaceChildren();
    appendMarked(title, p.title || "", termRe);
  }

  function showPassage() {
    sentences.forEach((s, i) => s.classList.toggle("current", passage !== null && i >= passage[0] && i <= passage[1]));
    if (passage !== null) sentences[passage[1]].scrollIntoView({ block: "nearest" });
  }

  function moveSentence(step) {
    if (!sentences.length) return;
    const at = passage === null ? (step > 0 ? -1 : sentences.length) : (step > 0 ? passage[1] : passage[0]);
    const i = Math.min(sentences.length - 1, Math.max(0, at + step));
    passage = [i, i];
    showPassage();
    message(`Sentence ${i + 1} of ${sentences.length}: q quotes it, J/K extend or shrink the passage.`);
  }

  function extendPassage(step) {
    if (!sentences.length) return;
    if (passage === null) { moveSentence(1); return; }
    const last = Math.min(sentences.length - 1, Math.max(passage[0], passage[1] + step));
    passage = [passage[0], last];
    showPassage();
    message(`Sentences ${passage[0] + 1}–${passage[1] + 1} of ${sentences.length}: q quotes them.`);
  }

  function toggleHighlight() {
    highlight = !highlight;
    $("pair-view").classList.toggle("no-terms", !highlight);
    $("toggle-highlight").setAttribute("aria-pressed", String(highlight));
    message(highlight ? "Query terms highlighted." : "Query terms not highlighted.");
  }

  // --- showing a pair, progress, the practice result -----------------------------------------
  function show(which) {
    $("pair-view").hidden = which !== "pair";
    $("done").hidden = which !== "done";
    $("practice-result").hidden = which !== "practice";
  }

  function render(p) {
    current = p;
    show(p ? "pair" : "done");
    const draft = (p && loadDraft(p)) || {};   // what was typed for this pair before a reload
    $("evidence").value = draft.evidence || "";
    $("comment").value = draft.comment || "";
    $("flag").value = draft.flag || "";
    $("more").open = Boolean(draft.comment || draft.flag);
    renderText(p);
    if (!p) return;
    $("qid").textContent = p.qid;
    $("query").textContent = p.query;
    const topic = p.topic || {};
    $("topic-description").textContent = topic.description || "";
    $("topic-description-row").hidden = !topic.description;
    $("topic-narrative").textContent = topic.narrative || "";
    $("topic-narrative-row").hidden = !topic.narrative;
    $("practice-banner").hidden = !p.practice;
    shownAt.t = Date.now();
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return null;
    if (seconds < 90) return `${Math.round(seconds)} s`;
    if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
    return `${(seconds / 3600).toFixed(1)} h`;
  }

  async function refreshProgress() {
    const r = await api("GET", "/api/progress");
    if (!r.ok) return;
    const p = await r.json();
    const parts = [];
    if (p.practice && !p.practice.finished) parts.push(`practice ${p.practice.done} of ${p.practice.pairs}`);
    parts.push(`done ${p.graded + p.skipped} of your share of about ${p.share}`, `${p.left} left`);
    if (p.skipped) parts.push(`${p.skipped} skipped`);
    if (p.median_seconds !== null) parts.push(`${p.median_seconds} s per judgment`);
    const eta = duration(p.eta_seconds);
    if (eta && p.left > 0) parts.push(`about ${eta} to go`);
    $("progress").textContent = parts.join(" · ");
    $("done-summary").textContent = `You judged ${p.graded} document${p.graded === 1 ? "" : "s"}` + (p.skipped ? ` and skipped ${p.skipped}` : "") +
      (p.median_seconds !== null ? `, ${p.median_seconds} s per judgment (median)` : "") + ". Thank you.";
  }

  function showPractice(report) {
    current = null;
    show("practice");
    const pct = report.agreement === null ? "n/a" : `${Math.round(report.agreement * 100)}%`;
    const kappa = report.cohen_kappa === null ? "n/a" : report.cohen_kappa.toFixed(2);
    $("practice-summary").textContent = `You agreed with the known answer on ${report.agreed} of ${report.graded} ` +
      `practice documents (${pct}; Cohen's κ ${kappa}).`;
    const body = $("practice-table").tBodies[0];
    body.replaceChildren();
    for (const item of report.items) {
      const tr = document.createElement("tr");
      if (item.grade !== item.answer) tr.className = "differs";
      for (const v of [item.qid, item.title || item.docid, item.grade === null ? "—" : item.grade, item.answer]) {
        const td = document.createElement("td");
        const bdi = document.createElement("bdi");
        bdi.textContent = String(v);
        td.appendChild(bdi);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("start-work").focus();
  }

  async function loadNext() {
    const r = await api("POST", "/api/next");
    if (r.status === 204) render(null);
    else if (r.status === 409) {
      const b = await r.json();
      if (b.practice) showPractice(b.practice); else message(b.detail, true);
    } else if (r.ok) render(await r.json());
    else message(await detail(r), true);
    await refreshProgress();
  }

  async function startWork() {
    const r = await api("POST", "/api/practice/start");
    if (!r.ok) { message(await detail(r), true); return; }
    message("Practice done: the real work starts now.");
    await loadNext();
  }

  // --- answering ----------------------------------------------------------------------------
  function keepDraft() {
    if (current) saveDraft(current, { evidence: $("evidence").value, comment: $("comment").value, flag: $("flag").value });
  }

  async function post(url, body, done, pair) {
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
    if (pair) dropDraft(pair);
    message(done(await r.json()));
    await loadNext();
  }

  function extras() {
    const out = {};
    const comment = $("comment").value.trim();
    if (comment) out.comment = comment;
    if ($("flag").value) out.flag = $("flag").value;
    return out;
  }

  function noted(j) {
    return (j.flag ? `, flagged ${j.flag.replace("-", " ")}` : "") + (j.comment ? ", with a comment" : "");
  }

  function grade(g) {
    if (!current) return;
    const evidence = $("evidence").value.trim();
    if (evidenceRequired && g > minGrade && !evidence) {
      message(`Evidence required for grade ${g}: pick a sentence (j/k) and press q, or press e and write a note.`, true);
      return;
    }
    const pair = current;
    post("/api/judgments", { qid: pair.qid, docid: pair.docid, grade: g, evidence, request_id: requestId(), ...extras() },
      (j) => `Saved grade ${j.grade} for ${pair.docid}${noted(j)}${j.revision > 1 ? " (revision " + j.revision + ")" : ""}.`, pair);
  }

  function skip() {
    if (!current) return;
    const pair = current;
    post("/api/skip", { qid: pair.qid, docid: pair.docid, request_id: requestId(), ...extras() },
      (j) => `Skipped ${pair.docid}${noted(j)}.`, pair);
  }

  function undo() {
    post("/api/undo", { request_id: requestId() },
      (j) => `Undone: ${j.docid} is back; judge it again (the earlier judgment stays in the history).`);
  }

  function quote() {
    let text = "";
    const sel = window.getSelection();
    const selected = sel ? sel.toString().trim() : "";
    if (selected && $("doc-text").contains(sel.anchorNode)) text = selected;
    else if (passage !== null) text = sentences.slice(passage[0], passage[1] + 1).map((s) => s.textContent).join("").trim();
    if (!text) { message("Pick a sentence first (j / k), or select a passage with the mouse.", true); return; }
    const box = $("evidence");
    box.value = (box.value ? box.value + "\n" : "") + "“" + text + "”";
    keepDraft();
    message("Quoted. Now grade it.");
  }

  function focusIn(id) {
    if (id === "comment" || id === "flag") $("more").open = true;
    $(id).focus();
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT")) {
      if (ev.key === "Escape") { t.blur(); ev.preventDefault(); }
      return;
    }
    if (!$("practice-result").hidden) {
      if (ev.key === "Enter" && t === document.body) { ev.preventDefault(); startWork(); }
      return;
    }
    if (ev.key === "?") { ev.preventDefault(); $("keys").open = !$("keys").open; return; }
    if (ev.key === "g") { ev.preventDefault(); $("guidelines-link").click(); return; }
    if (ev.key === "u") { ev.preventDefault(); undo(); return; }
    if (!current) return;
    if (/^[0-9]$/.test(ev.key) && grades.has(Number(ev.key))) { ev.preventDefault(); grade(Number(ev.key)); }
    else if (ev.key === "e") { ev.preventDefault(); focusIn("evidence"); }
    else if (ev.key === "c") { ev.preventDefault(); focusIn("comment"); }
    else if (ev.key === "f") { ev.preventDefault(); focusIn("flag"); }
    else if (ev.key === "q") { ev.preventDefault(); quote(); }
    else if (ev.key === "j") { ev.preventDefault(); moveSentence(1); }
    else if (ev.key === "k") { ev.preventDefault(); moveSentence(-1); }
    else if (ev.key === "J") { ev.preventDefault(); extendPassage(1); }
    else if (ev.key === "K") { ev.preventDefault(); extendPassage(-1); }
    else if (ev.key === "h") { ev.preventDefault(); toggleHighlight(); }
    else if (ev.key === "s") { ev.preventDefault(); skip(); }
  });
  document.querySelectorAll("button.grade").forEach((b) => b.addEventListener("click", () => grade(Number(b.dataset.grade))));
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  $("undo-done").addEventListener("click", undo);
  $("quote").addEventListener("click", quote);
  $("next-sentence").addEventListener("click", () => moveSentence(1));
  $("prev-sentence").addEventListener("click", () => moveSentence(-1));
  $("toggle-highlight").addEventListener("click", toggleHighlight);
  $("start-work").addEventListener("click", startWork);
  for (const id of ["evidence", "comment"]) $(id).addEventListener("input", keepDraft);
  $("flag").addEventListener("change", keepDraft);
  loadNext();
})();
