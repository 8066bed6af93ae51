// Review screens: keyboard flow (j/k next/previous turn, a approve, r reject, e edit, g guidelines, ? help), the edit
// lease (taken when the editor opens, renewed by the #lease heartbeat, released when it closes),
// "use A/B/mine/current" buttons that copy a value into a field, and extra new-rubric-item rows.
// Typed work is never dropped: unsaved editor changes make the browser ask before leaving the page, and Approve
// with unsaved changes asks and submits them as the reviewer's edit (the editor's "Submit edit (approve)").
(function () {
  "use strict";
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }
  function go(attr) {
    var review = document.getElementById("review");
    var url = review && review.dataset[attr];
    if (url) { window.location.assign(url); }
  }
  function click(id) {
    var el = document.getElementById(id);
    if (el) { el.click(); }
  }
  function openEditor() {
    var panel = document.getElementById("edit-panel");
    if (!panel) { return; }
    panel.open = true;
    var first = panel.querySelector("textarea");
    if (first) { first.focus(); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    var help = document.getElementById("shortcuts");
    switch (event.key) {
      case "j": go("next"); break;
      case "k": go("prev"); break;
      case "a": {
        // The shortcut approves and moves on to the next queued turn, which offers Undo for a minute;
        // the button itself approves and stays on this turn.
        var advance = document.getElementById("approve-advance");
        if (advance) { advance.value = "1"; }
        click("approve-btn");
        break;
      }
      case "r": {
        var reason = document.getElementById("reject-reason");
        if (reason) { reason.focus(); }
        break;
      }
      case "e": openEditor(); break;
      case "g": {
        var guidelines = document.getElementById("guidelines-panel");
        if (guidelines) { guidelines.open = !guidelines.open; }
        break;
      }
      case "?": if (help && !help.open) { help.showModal(); } break;
      default: return;
    }
    event.preventDefault();
  });

  // --- unsaved editor changes ---------------------------------------------------------------------------------
  // "Unsaved" = typed since the form was drawn or last saved. A field counts once, whatever was typed in it.
  var changed = new Set();
  function editForm() { return document.getElementById("edit-form"); }
  function noteChange(event) {
    var form = editForm();
    if (form && event.target && event.target.form === form && event.target.name) { changed.add(event.target.name); }
  }
  document.addEventListener("input", noteChange);
  document.addEventListener("change", noteChange);  // checkboxes and selects
  // A save that answered 2xx stored what the form held (a draft, a new version, a submission).
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = editForm();
    if (event.detail.successful && form && (event.detail.elt === form || event.detail.elt.form === form)) {
      changed.clear();
    }
  });
  window.addEventListener("beforeunload", function (event) {
    if (changed.size && editForm()) { event.preventDefault(); event.returnValue = ""; }
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

  // Lease: the toggle event does not bubble, so listen in the capture phase.
  document.addEventListener("toggle", function (event) {
    var panel = event.target;
    if (!panel || panel.id !== "edit-panel" || !window.htmx) { return; }
    var url = panel.open ? panel.dataset.leaseUrl : panel.dataset.releaseUrl;
    window.htmx.ajax("POST", url, { source: panel, target: "#lease", swap: "outerHTML" });
  }, true);
  // Leaving the page with the editor open gives the lease back (it would expire anyway).
  window.addEventListener("pagehide", function () {
    var panel = document.getElementById("edit-panel");
    var token = document.querySelector("#edit-form input[name=csrfmiddlewaretoken]");
    if (panel && panel.open && token && navigator.sendBeacon) {
      var data = new FormData();
      data.append("csrfmiddlewaretoken", token.value);
      navigator.sendBeacon(panel.dataset.releaseUrl, data);
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target) { return; }
    if (target.id === "help-link") {
      event.preventDefault();
      var help = document.getElementById("shortcuts");
      if (help) { help.showModal(); }
    } else if (target.classList && target.classList.contains("take")) {
      var field = document.getElementById(target.dataset.target);
      if (field) { field.value = target.dataset.value; field.focus(); }
      var chosen = document.getElementById("adjudication-chosen");
      if (chosen) { chosen.value = "merged"; }
    } else if (target.id === "add-rubric") {
      var rows = document.querySelectorAll("#rubric-rows tr.rubric-new");
      var last = rows[rows.length - 1];
      if (!last) { return; }
      var copy = last.cloneNode(true);
      var n = rows.length;
      copy.querySelectorAll("[name], [id]").forEach(function (el) {
        ["name", "id"].forEach(function (attr) {
          var value = el.getAttribute(attr);
          if (value) { el.setAttribute(attr, value.replace(/rubric-new-\d+-/, "rubric-new-" + n + "-")); }
        });
        if (el.tagName === "TEXTAREA") { el.value = ""; }
        if (el.type === "checkbox") { el.checked = false; }
      });
      last.parentNode.insertBefore(copy, last.nextSibling);
      var text = copy.querySelector("textarea");
      if (text) { text.focus(); }
    }
  });
})();

// EHR evidence search: filters the panel's rows, diagnoses and note sections as you type ("/" focuses it).
(function () {
  "use strict";
  var input = document.getElementById("evidence-search");
  if (!input) { return; }
  var panel = document.getElementById("evidence");
  var empty = document.getElementById("evidence-no-match");
  function filter() {
    var query = input.value.trim().toLowerCase();
    var shown = 0;
    panel.querySelectorAll("#evidence tbody tr, #evidence-diagnoses li, #evidence-notes details").forEach(function (el) {
      var hit = !query || el.textContent.toLowerCase().indexOf(query) !== -1;
      el.hidden = !hit;
      if (el.tagName === "DETAILS") { el.open = Boolean(query) && hit; }
      if (hit) { shown += 1; }
    });
    if (empty) { empty.hidden = !query || shown > 0; }
  }
  input.addEventListener("input", filter);
  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (event.key === "/" && tag !== "INPUT" && tag !== "TEXTAREA" && tag !== "SELECT") {
      event.preventDefault();
      input.focus();
    }
  });
})();
