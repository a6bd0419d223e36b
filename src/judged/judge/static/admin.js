"use strict";
// The admin page: its content comes from GET /api/status (the session's page key goes with
// it; a cookie alone opens only this shell), put in with textContent only. Adjudicate a
// disagreement (appended as the admin's judgment), reassign an assessor's remaining pairs,
// export the qrels; then show the status again.
(function () {
  if (!window.judged.sessionOk) return;        // common.js said why
  const { api, requestId, detail, message } = window.judged;
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "dataset") Object.assign(e.dataset, v);
      else if (k === "className") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  const bdi = (text) => el("bdi", {}, text);
  const num = (text) => el("td", { className: "num" }, text);

  function dur(s) {
    if (s === null || s === undefined) return "—";
    if (s < 90) return `${Math.round(s)} s`;
    if (s < 5400) return `${Math.round(s / 60)} min`;
    return `${(s / 3600).toFixed(1)} h`;
  }
  const three = (x) => (x === null || x === undefined ? "n/a" : x.toFixed(3));
  // "1 pair goes", "2 pairs go": judged.core.words.counted's rule
  const counted = (n, one, many) => `${n} ${n === 1 ? one : many || one + "s"}`;

  function summary(st) {
    const waiting = st.open_disagreements;
    $("summary").textContent = `${st.labelled} of ${counted(st.pairs, "pair")} labelled` +
      (waiting ? ` (${counted(waiting, "disagreement")} to decide below)` : "") +
      ` · ${st.judgments_done} of ${counted(st.judgments_wanted, "judgment")} done, ${st.judgments_left} left · ` +
      `${counted(st.overlap_pairs, "pair goes", "pairs go")} to two assessors.`;
    const eta = $("eta");
    eta.replaceChildren("Estimated time to finish: ", el("strong", {}, dur(st.eta_seconds)),
      st.median_seconds !== null
        ? ` (${counted(st.judgments_left, "judgment")} × ${st.median_seconds} s median ÷ ` +
          `${counted(st.active_assessors, "active assessor")}).`
        : " (no timed judgment yet).");
  }

  function assessors(st) {
    $("assessors").tBodies[0].replaceChildren(...st.assessors.map((a) => {
      const pr = a.practice;
      const practice = !pr ? "—" : pr.agreement === null ? "not yet"
        : `${Math.round(pr.agreement * 100)}% (${pr.agreed} of ${pr.done} agreed)`;
      const name = el("td", {}, bdi(a.assessor));
      if (a.admin) name.append(" (admin)");
      if (a.revoked) name.append(" (revoked)");
      return el("tr", { dataset: { assessor: a.assessor } }, name, el("td", {}, a.active ? "yes" : "no"),
        num(a.share), num(a.graded + a.skipped), num(a.open), num(a.left),
        num(a.median_seconds !== null ? a.median_seconds : "—"), el("td", {}, a.left ? dur(a.eta_seconds) : "—"),
        el("td", {}, practice));
    }));
    const from = $("reassign-from"), to = $("reassign-to");
    const picked = [from.value, to.value];
    from.replaceChildren(...st.assessors.filter((a) => !a.admin)
      .map((a) => el("option", { value: a.assessor }, `${a.assessor} (${a.open} open)`)));
    to.replaceChildren(el("option", { value: "" }, "anyone (back to the pool)"),
      ...st.assessors.filter((a) => !a.admin && a.active).map((a) => el("option", { value: a.assessor }, a.assessor)));
    if (picked[0]) from.value = picked[0];
    if (picked[1]) to.value = picked[1];
  }

  function agreement(st) {
    const ag = st.agreement;
    $("agreement").textContent = `${counted(ag.pairs, "doubly judged pair")} · Cohen's κ = ${three(ag.cohen_kappa)} · ` +
      `Krippendorff's α (ordinal) = ${three(ag.krippendorff_alpha_ordinal)}`;
    $("agreement-convention").textContent = ag.convention;
  }

  function section(id, heading, table) {
    const box = $(id);
    box.replaceChildren(box.querySelector("h2"), table || el("p", {}, "None."));
  }

  function disagreements(st) {
    const options = $("grade-options").content;
    const rows = st.disagreements.map((d, i) => {
      const labels = el("td", {}, ...d.labels.map((l) => {
        const div = el("div", {}, bdi(l.assessor), `: ${l.grade}`);
        if (l.evidence) div.append(" — ", bdi(l.evidence));
        if (l.flag) div.append(` [${l.flag}]`);
        if (l.comment) div.append(" (", bdi(l.comment), ")");
        return div;
      }));
      const history = el("ol", { className: "history" }, ...d.history.map((e) => {
        const li = el("li", {}, `${e.time} `, bdi(e.assessor), ` ${e.kind}${e.grade !== null ? " " + e.grade : ""}`);
        if (e.evidence) li.append(" — ", bdi(e.evidence));
        return li;
      }));
      labels.append(el("details", {}, el("summary", {}, `history (${counted(d.history.length, "event")})`), history));
      const n = i + 1;
      const select = el("select", { name: "grade", id: `grade-${n}` });
      select.append(options.cloneNode(true));
      const form = el("form", { className: "adjudicate", dataset: { qid: d.qid, docid: d.docid } },
        el("label", { for: `grade-${n}`, className: "visually-hidden" }, `final grade for ${d.qid} / ${d.docid}`), select,
        el("label", { for: `reason-${n}`, className: "visually-hidden" }, `reason for ${d.qid} / ${d.docid}`),
        el("input", { name: "evidence", id: `reason-${n}`, placeholder: "reason" }),
        el("button", { type: "submit" }, "decide"));
      form.addEventListener("submit", adjudicate);
      return el("tr", { dataset: { docid: d.docid } }, el("td", {}, bdi(d.qid)), el("td", {}, bdi(d.docid)), labels,
        el("td", { className: "adjudicated" }, d.adjudicated !== null ? d.adjudicated : "—"), el("td", {}, form));
    });
    section("disagreements-section", "Disagreements", rows.length ? el("table", { id: "disagreements" },
      el("thead", {}, el("tr", {}, ...["qid", "docid", "labels", "adjudicated", "decide"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows)) : null);
  }

  function queries(st) {
    $("queries").tBodies[0].replaceChildren(...st.queries.map((q) => el("tr", {}, el("td", {}, bdi(q.qid)), num(q.pairs),
      num(`${q.judged} of ${q.copies}`), num(q.labelled), num(q.disagreements))));
  }

  function flags(st) {
    const rows = st.flags.map((f) => el("tr", {}, el("td", {}, bdi(f.qid)), el("td", {}, bdi(f.docid)),
      el("td", {}, bdi(f.assessor)), el("td", {}, f.kind + (f.grade !== null ? " " + f.grade : "")),
      el("td", {}, f.flag || "—"), el("td", {}, bdi(f.comment))));
    section("flags-section", "Flags and comments", rows.length ? el("table", { id: "flags" },
      el("thead", {}, el("tr", {}, ...["qid", "docid", "assessor", "judgment", "flag", "comment"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows)) : null);
  }

  async function refresh() {
    const r = await api("GET", "/api/status");
    if (!r.ok) { message(await detail(r), true); return; }
    const st = await r.json();
    summary(st);
    assessors(st);
    agreement(st);
    disagreements(st);
    queries(st);
    flags(st);
    $("admin").dataset.loaded = "yes";
  }

  async function adjudicate(ev) {
    ev.preventDefault();
    const form = ev.currentTarget;
    const body = { qid: form.dataset.qid, docid: form.dataset.docid, grade: Number(form.elements.grade.value),
                   evidence: form.elements.evidence.value, request_id: requestId() };
    const r = await api("POST", "/api/adjudications", body);
    if (r.ok) await refresh(); else message(await detail(r), true);
  }

  const reassign = $("reassign");
  reassign.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { from: reassign.elements.from.value, deactivate: reassign.elements.deactivate.checked };
    if (reassign.elements.to.value) body.to = reassign.elements.to.value;
    const r = await api("POST", "/api/reassign", body);
    if (!r.ok) { message(await detail(r), true); return; }
    const b = await r.json();
    await refresh();
    message(`Reassigned ${counted(b.to ? b.moved : b.released, "open pair")} of ${b.from} to ${b.to || "the pool"}` +
      (b.released && b.to ? ` (${b.released} back to the pool: ${b.to} holds their other copy)` : "") +
      (b.deactivated ? `; ${b.from} gets no new work, their token is revoked and their sessions ended.` : "."));
  });

  $("export-link").addEventListener("click", async (ev) => {
    ev.preventDefault();      // a plain link carries no page key: fetch, then save what came
    const r = await api("GET", "/api/export");
    if (!r.ok) { message(await detail(r), true); return; }
    const url = URL.createObjectURL(new Blob([await r.text()], { type: "text/plain" }));
    const a = el("a", { href: url, download: "qrels.txt" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  });

  refresh();
})();
