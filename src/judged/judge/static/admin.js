"use strict";
// The admin page: adjudicate a disagreement (appended as the admin's judgment), then reload.
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
})();
