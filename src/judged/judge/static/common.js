"use strict";
// Shared by the judging and admin pages: the session check, then JSON calls with the
// session's page key, retried with the same body (so the same request_id) on network
// errors and 5xx.
//
// The page key was kept in this origin's storage at log-in (signed-in.js) with the
// session's tag. A page whose tag is not the stored one belongs to a session this page
// did not start (a page on another port planted its cookie, or another tab logged in as
// someone else): it says so and sends nothing. The key read here stays with this page, so
// a session that changes later is refused by the server (401 "replaced").
window.judged = (function () {
  const STORE = "judged-session";
  const DRAFTS = "judged-draft:";
  const metaTag = document.querySelector('meta[name="session-tag"]');
  const pageTag = metaTag ? metaTag.content : "";
  const whoEl = document.getElementById("who");
  const who = whoEl ? whoEl.dataset.name : "";
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  let key = "";
  let sessionOk = false;

  function stored() {
    try { return JSON.parse(localStorage.getItem(STORE) || "null"); } catch (e) { return null; }
  }

  function refuseSession() {
    sessionOk = false;
    const main = document.getElementById("main");
    if (!main || document.getElementById("session-refused")) return;
    const box = document.createElement("section");
    box.className = "login";
    box.id = "session-refused";
    box.setAttribute("role", "alert");
    const h = document.createElement("h1");
    h.textContent = "This session was not started on this page";
    const p = document.createElement("p");
    p.appendChild(document.createTextNode("This browser now holds a session for "));
    const name = document.createElement("bdi");
    name.textContent = who || "someone";
    p.appendChild(name);
    p.appendChild(document.createTextNode(" that this page did not log in with: another page (on another port " +
      "of this machine) or another tab replaced it. Nothing is sent under it."));
    const again = document.createElement("p");
    const a = document.createElement("a");
    a.href = "/login";
    a.id = "login-again";
    a.textContent = "Log in again with your own token";
    again.appendChild(a);
    box.append(h, p, again);
    main.replaceChildren(box);
    a.focus();
  }

  if (pageTag) {
    const s = stored();
    if (s && s.tag === pageTag && s.key) { key = s.key; sessionOk = true; } else refuseSession();
  }

  const logout = document.getElementById("logout-form");
  if (logout) {
    logout.addEventListener("submit", () => {
      logout.elements.csrf.value = key;
      try {
        localStorage.removeItem(STORE);
        for (const k of Object.keys(localStorage)) if (k.startsWith(DRAFTS)) localStorage.removeItem(k);
      } catch (e) { /* storage gone: nothing to forget */ }
    });
  }

  function requestId() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  async function api(method, url, body) {
    if (!sessionOk) throw new Error("this page holds no session of its own: log in again");
    const opts = { method, headers: { "X-Session-Key": key }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await fetch(url, opts);
        if (r.status >= 500 && attempt < 3) throw new Error("server error " + r.status);
        if (r.status === 401) {
          let b = null;
          try { b = await r.clone().json(); } catch (e) { b = null; }
          if (b && b.session === "replaced") refuseSession();
          else window.location.assign("/login?why=ended");
        }
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
    if (!m) return;
    m.textContent = text;
    m.classList.toggle("error", !!isError);
  }
  // a draft (evidence, comment, flag) typed for a pair, kept in this origin's storage until
  // it is sent, so a reload does not lose it; forgotten at log-out
  function draftKey(pair) { return DRAFTS + JSON.stringify([who, pair.qid, pair.docid]); }
  function saveDraft(pair, draft) {
    try {
      if (draft.evidence || draft.comment || draft.flag) localStorage.setItem(draftKey(pair), JSON.stringify(draft));
      else localStorage.removeItem(draftKey(pair));
    } catch (e) { /* storage full or gone: the draft lives in the page only */ }
  }
  function loadDraft(pair) {
    try { return JSON.parse(localStorage.getItem(draftKey(pair)) || "null"); } catch (e) { return null; }
  }
  function dropDraft(pair) {
    try { localStorage.removeItem(draftKey(pair)); } catch (e) { /* nothing kept */ }
  }
  return { api, requestId, detail, message, saveDraft, loadDraft, dropDraft, get sessionOk() { return sessionOk; } };
})();
