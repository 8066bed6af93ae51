// Every page: a fragment request (htmx) that finds the session expired gets 401, which htmx does not swap, so the
// page and what was typed in it stay; the signed-out banner offers a sign-in in a new tab. After signing in there,
// the CSRF token has changed (Django rotates it at login): each request takes the current one from the cookie.
(function () {
  "use strict";
  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }
  document.addEventListener("htmx:configRequest", function (event) {
    var token = cookie("csrftoken");
    if (!token) { return; }
    event.detail.headers["X-CSRFToken"] = token;
    // Django reads a posted csrfmiddlewaretoken before the header: the form's copy must be the current one too.
    document.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach(function (input) { input.value = token; });
    var params = event.detail.parameters;
    if (params && params.csrfmiddlewaretoken !== undefined) { params.csrfmiddlewaretoken = token; }
  });
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var banner = document.getElementById("signed-out");
    if (!xhr || xhr.status !== 401 || !banner) { return; }
    var link = banner.querySelector("a");
    if (link && xhr.getResponseHeader("X-Login-URL")) { link.href = xhr.getResponseHeader("X-Login-URL"); }
    banner.hidden = false;
    banner.scrollIntoView({ block: "nearest" });
  });
  // A request that succeeds again (signed in in the other tab) takes the banner away.
  document.addEventListener("htmx:afterRequest", function (event) {
    var banner = document.getElementById("signed-out");
    if (banner && event.detail.successful) { banner.hidden = true; }
  });
})();
