"use strict";
// Log in: the form goes by fetch, so that the answer (the session's page key, given once)
// reaches this page's script, which keeps it in this origin's storage (another port is
// another origin: no page there can read or replace it; cookies ignore ports), then opens
// the work. The key goes with every API call (common.js).
(function () {
  const form = document.getElementById("login-form");
  const error = document.getElementById("login-error");
  function show(text) {
    error.textContent = text;
    error.hidden = false;
    form.elements.token.value = "";
    form.elements.token.focus();
  }
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let r, b = {};
    try {
      r = await fetch("/login", { method: "POST", body: new URLSearchParams(new FormData(form)),
                                  headers: { Accept: "application/json" }, credentials: "same-origin" });
      b = await r.json();
    } catch (e) {
      show(r ? `The server answered ${r.status}.` : "The server cannot be reached: " + e.message);
      return;
    }
    if (!r.ok || !b.session_key) { show(b.detail || `The server answered ${r.status}.`); return; }
    try {
      localStorage.setItem("judged-session", JSON.stringify({ key: b.session_key, tag: b.session_tag }));
    } catch (e) {
      show("This page needs the browser's local storage for this site (your session's key is kept there): allow it, then log in again.");
      return;
    }
    window.location.assign(b.next);
  });
})();
