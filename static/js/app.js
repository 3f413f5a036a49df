// Portal behaviour: small progressive enhancements on top of server-rendered pages and htmx.
(function () {
  "use strict";

  var STATUS_MESSAGES = {
    400: "The request was not accepted. Reload the page and try again.",
    401: "Your session has ended. Sign in again.",
    403: "Your role does not allow this action.",
    404: "This record no longer exists.",
    409: "The record changed or is read-only. Reload the page.",
    413: "That is too large to send. Split it into smaller parts.",
    429: "Too many requests. Wait a moment and try again.",
    503: "The service is busy or partly unavailable. Nothing was saved; try again in a minute.",
  };

  function toast(message, level) {
    var box = document.getElementById("toasts");
    if (!box) return;
    var el = document.createElement("div");
    el.className = "toast" + (level === "error" ? " toast-error" : "");
    el.setAttribute("role", level === "error" ? "alert" : "status");
    var text = document.createElement("span");
    text.textContent = message;
    var close = document.createElement("button");
    close.type = "button";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    close.addEventListener("click", function () { el.remove(); });
    el.appendChild(text);
    el.appendChild(close);
    box.appendChild(el);
    setTimeout(function () { el.remove(); }, 8000);
  }
  window.portalToast = toast;

  // Dismissable flashes.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-dismiss]");
    if (button) {
      var box = button.closest(".flash, .alert");
      if (box) box.remove();
    }
    var toggle = event.target.closest("[data-nav-toggle]");
    if (toggle) {
      var sidebar = toggle.closest(".sidebar");
      var open = !sidebar.classList.contains("open");
      sidebar.classList.toggle("open", open);
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      toggle.textContent = open ? "Close menu" : "Menu";
      return;
    }
    var copy = event.target.closest("[data-copy]");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy"));
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          copy.textContent = "Copied";
          setTimeout(function () { copy.textContent = "Copy"; }, 2000);
        });
      }
    }
  });

  // Show or hide fields that depend on another field: data-show-when="field_name=value".
  function syncDependents(root) {
    (root || document).querySelectorAll("[data-show-when]").forEach(function (el) {
      var rule = el.getAttribute("data-show-when").split("=");
      var form = el.closest("form");
      if (!form) return;
      var control = form.elements[rule[0]];
      if (!control) return;
      var show = control.value === rule[1];
      el.hidden = !show;
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.form) syncDependents(event.target.form);
  });
  document.addEventListener("DOMContentLoaded", function () { syncDependents(document); });

  // htmx: errors become toasts; a fragment swap re-syncs dependents and moves focus where it helps.
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var header = xhr.getResponseHeader("X-Portal-Message");
    var message = header ? decodeURIComponent(header) : (STATUS_MESSAGES[xhr.status] || "Something went wrong. Try again.");
    toast(message, "error");
  });
  document.addEventListener("htmx:sendError", function () {
    toast("The server could not be reached. Check your connection.", "error");
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    // A history restore (back / forward) swaps without a target element: fall back to the document.
    var detail = event.detail || {};
    var root = (detail.target && detail.target.querySelector) ? detail.target : document;
    syncDependents(root);
    var focus = root.querySelector("[data-autofocus]");
    if (focus) focus.focus();
  });
  // A notice of the server (X-Portal-Notice) once per request, however many elements the answer swapped.
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail && event.detail.xhr;
    var message = xhr && event.detail.successful && xhr.getResponseHeader("X-Portal-Notice");
    if (message) toast(decodeURIComponent(message), "info");
  });
  document.addEventListener("htmx:historyRestore", function () { syncDependents(document); });

  // The browser's time zone, for times shown before the user picks one in the profile.
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("tz=" + encodeURIComponent(zone)) === -1) {
      document.cookie = "tz=" + encodeURIComponent(zone) + "; path=/; max-age=31536000; SameSite=Lax";
    }
  } catch (e) { /* no Intl: times stay in UTC */ }
})();
