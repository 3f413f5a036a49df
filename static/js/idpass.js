// IDPass pages (templates/idpass/): the launch form's cost by its document steps (the prices are the server's,
// read from data-price-1..3; the server's figure at launch is the one charged), a document type greyed out in
// the other steps once a step allows it, the ID photo's purpose shown with its checkbox; on the IDPass page the
// link copied with the Clipboard API and the cancel asked to be confirmed. Delegated on the document: no inline
// script (the CSP forbids them), safe to load once per page.
(function () {
  "use strict";
  if (window.idpassPortal) return;
  window.idpassPortal = true;

  function stepsFilled(form) {
    var filled = 0;
    form.querySelectorAll("[data-idpass-step]").forEach(function (step) {
      if (step.querySelector("input[type=checkbox]:checked")) filled += 1;
    });
    return filled;
  }

  function updateCost(form) {
    var steps = stepsFilled(form);
    var price = parseInt(form.getAttribute("data-price-" + Math.max(steps, 1)), 10);
    var balance = parseInt(form.getAttribute("data-balance"), 10);
    var cost = form.querySelector("[data-idpass-cost]");
    if (cost && !isNaN(price)) cost.textContent = price.toLocaleString();
    var label = form.querySelector("[data-idpass-steps]");
    if (label) label.textContent = steps + " document step" + (steps === 1 ? "" : "s");
    var warning = form.querySelector("[data-idpass-cost-warning]");
    if (warning) warning.hidden = isNaN(price) || isNaN(balance) || price <= balance;
  }

  // A document type serves one step: once ticked in a step, it cannot be ticked in another.
  function syncSteps(form) {
    var owner = {};
    form.querySelectorAll("[data-idpass-step]").forEach(function (step) {
      step.querySelectorAll("input[data-doc]:checked").forEach(function (box) {
        var doc = box.getAttribute("data-doc");
        if (!owner[doc]) owner[doc] = step.getAttribute("data-idpass-step");
      });
    });
    form.querySelectorAll("[data-idpass-step]").forEach(function (step) {
      var number = step.getAttribute("data-idpass-step");
      step.querySelectorAll("input[data-doc]").forEach(function (box) {
        var taken = owner[box.getAttribute("data-doc")];
        var blocked = !box.checked && taken && taken !== number;
        box.disabled = !!blocked;
        var label = step.querySelector("label[for='" + box.id + "']");
        if (label) {
          if (blocked) label.title = "Already allowed in step " + taken;
          else label.removeAttribute("title");
        }
      });
    });
  }

  function syncShown(root) {
    root.querySelectorAll("[data-show-if-checked]").forEach(function (el) {
      var box = document.getElementById(el.getAttribute("data-show-if-checked"));
      if (box) el.hidden = !box.checked;
    });
  }

  function init(root) {
    root.querySelectorAll("[data-idpass-form]").forEach(function (form) {
      syncSteps(form);
      updateCost(form);
      syncShown(form);
    });
  }

  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("[data-idpass-form]");
    if (!form) return;
    syncSteps(form);
    updateCost(form);
    syncShown(form);
  });

  function copied(button, text) {
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = text;
    setTimeout(function () { button.textContent = label; }, 2000);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy-link]");
    if (!button) return;
    var input = document.getElementById(button.getAttribute("data-copy-link"));
    if (!input) return;
    input.focus();
    input.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(function () { copied(button, "Copied"); },
        function () { copied(button, "Press Ctrl+C"); });
    } else {
      // No Clipboard API (a plain-http host): the link is selected for the keyboard.
      copied(button, "Selected: press Ctrl+C");
    }
  });

  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = (event.detail && event.detail.target) || document;
    init(target.querySelectorAll ? target : document);
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
})();
