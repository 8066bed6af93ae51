// Keyboard flow for the review screen: j/k next/previous turn, a approve, r reject, e edit, ? help.
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
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    var help = document.getElementById("shortcuts");
    switch (event.key) {
      case "j": go("next"); break;
      case "k": go("prev"); break;
      case "a": click("approve-btn"); break;
      case "r": {
        var reason = document.getElementById("reject-reason");
        if (reason) { reason.focus(); }
        break;
      }
      case "e": {
        var panel = document.getElementById("edit-panel");
        if (panel) {
          panel.open = true;
          var first = panel.querySelector("textarea");
          if (first) { first.focus(); }
        }
        break;
      }
      case "?": if (help && !help.open) { help.showModal(); } break;
      default: return;
    }
    event.preventDefault();
  });
  document.addEventListener("click", function (event) {
    if (event.target && event.target.id === "help-link") {
      event.preventDefault();
      var help = document.getElementById("shortcuts");
      if (help) { help.showModal(); }
    }
  });
})();
