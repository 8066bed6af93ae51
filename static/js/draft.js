// Typed work on the review screen is never lost (issue 35):
// - "unsaved" = typed in the editor since the form was drawn or last saved; a field counts once;
// - drafts save themselves a moment after typing stops and when a changed field loses focus (the hidden
//   #autosave button: the same request as "Save draft", marked draft=auto); the page answers with the saved
//   pieces only, so the caret stays where it is;
// - leaving the page with unsaved changes asks first, and if the reviewer leaves anyway the form is sent as a
//   draft (sendBeacon) on the way out;
// - Approve (button or `a`) with unsaved changes asks, and offers to submit them as the reviewer's edit;
// - editor text boxes grow with their content.
(function () {
  "use strict";
  var PAUSE_MS = 1500;  // after the last keystroke
  var BLUR_MS = 250;    // after a changed field loses focus (a click on Save cancels it)
  var changed = new Set();
  var typedSeq = 0;     // bumped by every change; a save clears `changed` only if nothing was typed meanwhile
  var sentSeq = null;
  var timer = null;

  function editForm() { return document.getElementById("edit-form"); }
  function inForm(el) { var form = editForm(); return form && el && el.form === form; }
  function schedule(delay) {
    window.clearTimeout(timer);
    timer = window.setTimeout(autosave, delay);
  }
  function autosave() {
    var button = document.getElementById("autosave");
    var active = document.activeElement;
    if (!button || !changed.size || sentSeq !== null) { return; }
    // A new rubric item's row turns into a stored item when saved and the editor is drawn again: wait until the
    // reviewer leaves that row, so what they type next does not land in a fresh empty row.
    if (active && active.closest && active.closest("tr.rubric-new") && inForm(active)) { return; }
    button.click();
  }
  function grow(el) {
    if (!el || el.tagName !== "TEXTAREA" || !el.closest("#edit-form")) { return; }
    el.style.height = "auto";
    el.style.height = Math.min(el.scrollHeight + 4, window.innerHeight * 0.7) + "px";
  }
  function growAll(root) {
    (root || document).querySelectorAll("#edit-form textarea").forEach(grow);
  }

  function noteChange(event) {
    var target = event.target;
    if (!inForm(target) || !target.name || target.id === "autosave") { return; }
    changed.add(target.name);
    typedSeq += 1;
    grow(target);
    schedule(PAUSE_MS);
  }
  document.addEventListener("input", noteChange);
  document.addEventListener("change", noteChange);  // checkboxes and selects
  document.addEventListener("focusout", function (event) {
    if (inForm(event.target) && changed.size) { schedule(BLUR_MS); }
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = editForm();
    var elt = event.detail.elt;
    if (form && (elt === form || elt.form === form)) {
      window.clearTimeout(timer);  // an explicit save (or this autosave) carries everything typed so far
      sentSeq = typedSeq;
    }
  });
  // A save that answered 2xx stored what the form held when it was sent (a draft, a new version, a submission).
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = editForm();
    var elt = event.detail.elt;
    var mine = sentSeq !== null && (!form || elt === form || elt.form === form || !document.body.contains(elt));
    if (!mine) { return; }
    var successful = event.detail.successful;
    if (successful && sentSeq === typedSeq) { changed.clear(); }
    sentSeq = null;
    // Typed while the save was on its way: save again. A refused save (signed out) waits for the next keystroke.
    if (successful && changed.size) { schedule(PAUSE_MS); }
  });

  // A save that draws the panel again (the editor's rows changed) puts the caret back where it was.
  var focus = null;
  document.addEventListener("htmx:beforeSwap", function () {
    var active = document.activeElement;
    focus = active && active.id ? { id: active.id, start: active.selectionStart, end: active.selectionEnd } : null;
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    growAll(event.detail.elt);
    if (!focus) { return; }
    var el = document.getElementById(focus.id);
    // Only when the swap took the focus away (it is on the page body now): if the reviewer has moved on to another
    // field meanwhile, the caret stays where they put it (a restore then would send their typing to the old field).
    var lost = !document.activeElement || document.activeElement === document.body;
    if (el && lost && el.offsetParent !== null) {
      el.focus({ preventScroll: true });
      if (focus.start !== null && focus.start !== undefined && el.setSelectionRange) {
        try { el.setSelectionRange(focus.start, focus.end); } catch (e) { /* not a text field */ }
      }
    }
    focus = null;
  });

  window.addEventListener("beforeunload", function (event) {
    if (changed.size && editForm()) { event.preventDefault(); event.returnValue = ""; }
  });
  // Left anyway (or the tab was closed): the form goes out as a draft on the way.
  window.addEventListener("pagehide", function () {
    var form = editForm();
    var button = document.getElementById("autosave");
    if (!changed.size || !form || !button || !navigator.sendBeacon) { return; }
    var data = new FormData(form);
    data.set("draft", "auto");
    navigator.sendBeacon(form.getAttribute("hx-post"), data);
  });

  // Approve (button or `a`) with unsaved changes: ask, and offer to submit them with the approval.
  document.addEventListener("submit", function (event) {
    var approve = document.getElementById("approve-btn");
    var dialog = document.getElementById("unsaved-dialog");
    var submitEdit = document.getElementById("submit-edit");
    if (!approve || event.target !== approve.form || !changed.size || !dialog || !submitEdit) { return; }
    event.preventDefault();
    event.stopPropagation();
    var button = document.getElementById("approve-with-changes");
    button.textContent = changed.size === 1 ? button.dataset.one : button.dataset.many.replace("N", changed.size);
    dialog.showModal();
    button.focus();
  }, true);
  document.addEventListener("click", function (event) {
    var dialog = document.getElementById("unsaved-dialog");
    if (!dialog || !event.target) { return; }
    if (event.target.id === "approve-with-changes") {
      dialog.close();
      var submitEdit = document.getElementById("submit-edit");
      if (submitEdit) { submitEdit.click(); }
    } else if (event.target.id === "unsaved-cancel") {
      dialog.close();
      var panel = document.getElementById("edit-panel");
      if (panel) { panel.open = true; }
    }
  });

  document.addEventListener("toggle", function (event) {
    if (event.target && event.target.id === "edit-panel" && event.target.open) { growAll(event.target); }
  }, true);
  growAll();
  window.PhysReviewDraft = { unsaved: function () { return changed.size; } };
})();
