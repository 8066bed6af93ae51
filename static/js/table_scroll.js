// Wide tables scroll inside their own box (.table-scroll): mark the edges that hide columns
// (overflow-left / overflow-right: CSS shades them) and show the box's "scroll →" hint while it overflows.
(function () {
  "use strict";
  function update(box) {
    var hidden = box.scrollWidth - box.clientWidth;
    var overflowing = hidden > 1;
    box.classList.toggle("overflow-left", overflowing && box.scrollLeft > 1);
    box.classList.toggle("overflow-right", overflowing && box.scrollLeft < hidden - 1);
    if (overflowing) {
      box.setAttribute("tabindex", "0"); // the keyboard can scroll it too
    } else {
      box.removeAttribute("tabindex");
    }
    if (box.id) {
      document.querySelectorAll('[data-scroll-hint-for="' + box.id + '"]').forEach(function (hint) {
        hint.hidden = !overflowing;
      });
    }
  }
  function all() {
    document.querySelectorAll(".table-scroll").forEach(update);
  }
  document.addEventListener("scroll", function (event) {
    if (event.target.classList && event.target.classList.contains("table-scroll")) {
      update(event.target);
    }
  }, true);
  window.addEventListener("resize", all);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", all);
  } else {
    all();
  }
})();
