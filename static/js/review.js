// Review screens: keyboard flow (j/k next/previous pending turn, a approve, r reject then 1-9 + Enter, u undo,
// e editor, Ctrl+Enter save, g guidelines, ? help), the decision bar's Edit and Save buttons, the edit lease
// (taken when the editor opens, renewed by the #lease heartbeat, released when it closes), "use A/B/mine/current"
// buttons that copy a value into a field, and extra new-rubric-item rows. Typed work: js/draft.js.
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
  function toggleEditor(open) {
    var panel = document.getElementById("edit-panel");
    if (!panel) { return; }
    panel.open = open === undefined ? !panel.open : open;
    if (panel.open) {
      var first = panel.querySelector("#edit-form textarea");
      panel.scrollIntoView({ block: "start" });
      if (first) { first.focus({ preventScroll: true }); }
    }
  }
  function saveButton() { return document.getElementById("save-draft") || document.getElementById("save-edit"); }
  document.addEventListener("keydown", function (event) {
    // Ctrl+Enter (Cmd+Enter): save the draft, also while typing in the editor.
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.closest &&
        event.target.closest("#edit-panel, #decision-bar")) {
      var save = saveButton();
      if (save) { event.preventDefault(); save.click(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    var help = document.getElementById("shortcuts");
    switch (event.key) {
      case "j": go("next"); break;
      case "k": go("prev"); break;
      case "a": click("approve-btn"); break;  // then on to the next pending turn, with Undo offered there
      case "r": {
        var reason = document.getElementById("reject-reason");
        if (reason) { reason.focus(); reason.classList.add("armed"); }
        break;
      }
      case "u": click("undo-btn"); break;
      case "e": toggleEditor(); break;
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
  // In the reject reason list: a number key picks that reason, Enter submits (the list does not open).
  document.addEventListener("keydown", function (event) {
    var select = event.target;
    if (!select || select.id !== "reject-reason" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (/^[1-9]$/.test(event.key) && Number(event.key) < select.options.length) {
      event.preventDefault();
      select.selectedIndex = Number(event.key);
      select.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (event.key === "Enter") {
      event.preventDefault();
      select.form.requestSubmit();
    }
  });
  // The decision bar's Edit and Save buttons.
  document.addEventListener("click", function (event) {
    var target = event.target && event.target.closest ? event.target.closest("button") : null;
    if (!target) { return; }
    if (target.id === "edit-toggle") { toggleEditor(); } else if (target.id === "bar-save") {
      var save = saveButton();
      if (save) { save.click(); }
    }
  });
  document.addEventListener("toggle", function (event) {
    if (!event.target || event.target.id !== "edit-panel") { return; }
    var toggle = document.getElementById("edit-toggle");
    var barSave = document.getElementById("bar-save");
    if (toggle) { toggle.setAttribute("aria-expanded", String(event.target.open)); }
    if (barSave) { barSave.hidden = !event.target.open; }
  }, true);

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
