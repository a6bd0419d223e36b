"use strict";
// Shared by the judging and admin pages: JSON calls with the session's CSRF token,
// retried with the same body (so the same request_id) on network errors and 5xx.
window.judged = (function () {
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.content : "";
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  function requestId() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }
  async function api(method, url, body) {
    const opts = { method, headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await fetch(url, opts);
        if (r.status >= 500 && attempt < 3) throw new Error("server error " + r.status);
        if (r.status === 401) { window.location.assign("/"); }
        return r;
      } catch (e) {
        if (attempt >= 3) throw e;
        await sleep(400 * (attempt + 1));
      }
    }
  }
  async function detail(r) {
    try {
      const b = await r.json();
      if (typeof b.detail === "string") return b.detail;
      if (Array.isArray(b.detail)) return b.detail.map((e) => `${(e.loc || []).slice(1).join(".")}: ${e.msg}`).join("; ");
      return JSON.stringify(b.detail);
    }
    catch (e) { return "error " + r.status; }
  }
  function message(text, isError) {
    const m = document.getElementById("message");
    m.textContent = text;
    m.classList.toggle("error", !!isError);
  }
  return { api, requestId, detail, message };
})();
