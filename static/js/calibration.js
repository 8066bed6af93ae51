// Calibration grading screen: j/k move between rubric items, p/f/u grade the current one (pass, fail,
// can't tell) through its htmx form and move on, n opens the next answer of the sample.
(function () {
  "use strict";
  var current = 0;
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }
  function items() { return Array.prototype.slice.call(document.querySelectorAll("#items > .calibration-item")); }
  function select(index) {
    var all = items();
    if (!all.length) { return; }
    current = Math.max(0, Math.min(index, all.length - 1));
    all.forEach(function (el, i) { el.classList.toggle("focused", i === current); });
    all[current].focus();
    all[current].scrollIntoView({block: "nearest"});
  }
  function grade(value) {
    var item = items()[current];
    var button = item && item.querySelector("button.grade-" + value);
    if (button) { button.click(); }
  }
  document.addEventListener("DOMContentLoaded", function () {
    var all = items();
    var first = all.findIndex(function (el) { return !el.classList.contains("graded"); });
    select(first < 0 ? 0 : first);
  });
  // A click grades (and makes current) the item it is in; after the swap the next item is current.
  document.addEventListener("click", function (event) {
    var item = event.target.closest && event.target.closest("#items > .calibration-item");
    if (item) { current = items().indexOf(item); }
  });
  // afterSettle, not afterSwap: htmx restores the swapped item's class attribute when it settles
  // (attributesToSettle), which would drop a "focused" class set any earlier.
  document.addEventListener("htmx:afterSettle", function () {
    var item = items()[current];
    var ok = item && !item.querySelector(".banner-error");
    select(ok ? current + 1 : current);
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    var root = document.getElementById("calibration");
    if (!root) { return; }
    switch (event.key) {
      case "j": select(current + 1); break;
      case "k": select(current - 1); break;
      case "p": grade("pass"); break;
      case "f": grade("fail"); break;
      case "u": grade("unsure"); break;
      case "n": window.location.assign(root.dataset.next); break;
      default: return;
    }
    event.preventDefault();
  });
})();
