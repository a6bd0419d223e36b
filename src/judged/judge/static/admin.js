"use strict";
// The admin page: adjudicate a disagreement (appended as the admin's judgment), reassign an
// assessor's remaining pairs; then reload.
(function () {
  const { api, requestId, detail, message } = window.judged;
  document.querySelectorAll("form.adjudicate").forEach((form) => {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { qid: form.dataset.qid, docid: form.dataset.docid, grade: Number(form.elements.grade.value),
                     evidence: form.elements.evidence.value, request_id: requestId() };
      const r = await api("POST", "/api/adjudications", body);
      if (r.ok) window.location.reload(); else message(await detail(r), true);
    });
  });
  const reassign = document.getElementById("reassign");
  if (reassign) {
    reassign.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { from: reassign.elements.from.value, deactivate: reassign.elements.deactivate.checked };
      if (reassign.elements.to.value) body.to = reassign.elements.to.value;
      const r = await api("POST", "/api/reassign", body);
      if (!r.ok) { message(await detail(r), true); return; }
      const b = await r.json();
      sessionStorage.setItem("judged-message", `Reassigned ${b.to ? b.moved : b.released} open pair${(b.to ? b.moved : b.released) === 1 ? "" : "s"} of ${b.from} to ${b.to || "the pool"}` +
        (b.released && b.to ? ` (${b.released} back to the pool: ${b.to} holds their other copy)` : "") +
        (b.deactivated ? `; ${b.from} gets no new work.` : "."));
      window.location.reload();
    });
  }
  const saved = sessionStorage.getItem("judged-message");
  if (saved) { sessionStorage.removeItem("judged-message"); message(saved); }
})();
