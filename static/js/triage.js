// The review loop: keyboard triage of the events inbox and the event page, bulk selection, the note dialog,
// and the projected cost of the "Run checks" form. Listeners are delegated on the document, so pages swapped
// in by htmx need no set-up; every shortcut also has a visible button.
(function () {
  "use strict";

  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=true]");
  }
  function openDialog(id) {
    var dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
    return dialog;
  }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("[data-event-row]")); }
  function focusedIndex(list) {
    for (var i = 0; i < list.length; i++) if (list[i].classList.contains("is-focused")) return i;
    return -1;
  }
  function focusRow(list, index) {
    if (!list.length) return null;
    index = Math.max(0, Math.min(list.length - 1, index));
    list.forEach(function (row) { row.classList.remove("is-focused"); row.removeAttribute("aria-current"); });
    var row = list[index];
    row.classList.add("is-focused");
    row.setAttribute("aria-current", "true");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
    return row;
  }
  function currentRow() {
    var list = rows();
    var index = focusedIndex(list);
    return index >= 0 ? list[index] : focusRow(list, 0);
  }

  // After a status key (or a note) in the inbox the swapped row keeps the focus; a closing decision moves on.
  // The row is found again by its id once htmx has settled (the response also updates the tabs out of band).
  var pendingRow = null;
  var advanceAfterSwap = false;
  function refocus() {
    if (!pendingRow) return;
    var list = rows();
    var row = document.getElementById(pendingRow);
    pendingRow = null;
    var index = row ? list.indexOf(row) : focusedIndex(list);
    if (index >= 0) focusRow(list, advanceAfterSwap ? index + 1 : index);
    advanceAfterSwap = false;
    updateSelection();
  }

  // The status keys come from the page (rendered from the statuses' registry, app/events/statuses.py):
  // `data-status-keys` on the keyboard help lists them; each key's button carries `data-key`, and `data-closes`
  // when its status closes the event (the inbox then moves on to the next row).
  function statusKeys() {
    var holder = document.querySelector("[data-status-keys]");
    return holder ? holder.getAttribute("data-status-keys").split(" ") : [];
  }
  function isStatusKey(key) { return statusKeys().indexOf(key) >= 0; }

  function press(selector) {
    var button = document.querySelector(selector);
    if (button) { button.click(); return true; }
    return false;
  }

  function inboxKey(key, event) {
    var list = rows();
    if (key === "j") { focusRow(list, focusedIndex(list) + 1); return true; }
    if (key === "k") { focusRow(list, focusedIndex(list) - 1); return true; }
    var row = currentRow();
    if (!row) return false;
    if (key === "Enter") { var link = row.querySelector("[data-open]"); if (link) link.click(); return true; }
    if (key === "x") {
      var box = row.querySelector("[data-select-row]");
      if (box) { box.checked = !box.checked; updateSelection(); }
      return true;
    }
    if (isStatusKey(key)) {
      var button = row.querySelector('[data-key="' + key + '"]');
      if (button) { advanceAfterSwap = button.hasAttribute("data-closes"); pendingRow = row.id; button.click(); }
      return true;
    }
    if (key === "n") return noteDialog(row, row.getAttribute("data-note-url"), null);
    return false;
  }

  // The inbox's dialog: a note on the row's event, or (a status given) the reason that a decision needs, e.g.
  // dismissing a strong hit (its button carries `data-needs-reason`): the decision is posted with the reason.
  function noteDialog(row, url, status) {
    var dialog = document.getElementById("note-dialog");
    if (!dialog) return false;
    var form = dialog.querySelector("form");
    form.setAttribute("hx-post", url);
    form.setAttribute("action", url);
    form.setAttribute("hx-target", "#" + row.id);
    if (window.htmx) window.htmx.process(form);
    var hidden = dialog.querySelector("[data-note-dialog-status]");
    hidden.value = status || "";
    if (status) hidden.setAttribute("name", "status"); else hidden.removeAttribute("name");
    dialog.querySelector("textarea").setAttribute("name", status ? "note" : "note_text");
    dialog.querySelector("[data-note-dialog-title]").textContent = status ? "Reason for dismissing" : "Add a note to";
    dialog.querySelector("[data-note-dialog-label]").textContent = status ? "Reason (required for a strong hit)" : "Note";
    dialog.querySelector("[data-note-dialog-submit]").textContent = status ? "Dismiss" : "Add note";
    dialog.querySelector("[data-note-dialog-event]").textContent = row.getAttribute("data-number");
    dialog.querySelector("textarea").value = "";
    pendingRow = row.id;
    advanceAfterSwap = !!status;  // a decision moves on once its row is swapped; a note stays
    dialog.showModal();
    dialog.querySelector("textarea").focus();
    return true;
  }

  function eventPageKey(key) {
    if (key === "j") return press("[data-event-nav] [data-next]");
    if (key === "k") return press("[data-event-nav] [data-prev]");
    var decide = document.querySelector('[data-decide] [data-key="' + key + '"]');
    var reason = document.getElementById("decision-note");
    if (decide && decide.hasAttribute("data-needs-reason") && reason && !reason.value.trim()) {
      reason.focus();  // a strong hit is not dismissed without a reason: write it, then press the button
      return true;
    }
    if (isStatusKey(key)) return press('[data-decide] [data-key="' + key + '"]');
    if (key === "n") {
      var box = document.querySelector("[data-note-box]");
      if (box) { box.focus(); box.scrollIntoView({ block: "center" }); return true; }
    }
    return false;
  }

  // A key that arrives while a row is being swapped waits for the swap to settle, so two fast status keys act
  // on the new row (whose buttons htmx has not wired yet), in order.
  var busy = false;
  var queued = [];
  function settled() {
    busy = false;
    var next = queued.shift();
    if (next) handleKey(next.key, next);
  }
  document.addEventListener("htmx:afterSettle", function () {
    refocus();
    if (busy) setTimeout(settled, 0);
  });
  document.addEventListener("htmx:responseError", function () { busy = false; queued = []; });
  document.addEventListener("htmx:sendError", function () { busy = false; queued = []; });

  function handleKey(key, event) {
    if (busy && document.querySelector("[data-inbox]") && ("jkxn".indexOf(key) >= 0 || isStatusKey(key))) {
      queued.push({ key: key, altKey: event.altKey });
      return true;
    }
    if (document.querySelector("[data-inbox]")) {
      var done = inboxKey(key, event);
      if (done && isStatusKey(key) && !document.querySelector("dialog[open]")) busy = true;
      return done;
    }
    if (document.querySelector("[data-event-page]")) return eventPageKey(key);
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey) return;
    var key = event.key;
    if (key === "Escape" && typing(event.target)) { event.target.blur(); return; }
    if (typing(event.target) || document.querySelector("dialog[open]")) return;
    if (event.altKey) return;
    var handled = false;
    if (key === "/") {
      var search = document.querySelector("[data-search-box]");
      if (search) { search.focus(); search.select(); handled = true; }
    } else if (key === "?") {
      handled = !!openDialog("keys-help");
    } else {
      handled = handleKey(key, event);
    }
    if (handled) event.preventDefault();
  });

  // Dialogs: the help button, close buttons; the note dialog closes once its note is saved.
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-keys-help]")) { openDialog("keys-help"); return; }
    var close = event.target.closest("[data-close-dialog]");
    if (close) { close.closest("dialog").close(); return; }
    var row = event.target.closest("[data-event-row]");
    var needsReason = event.target.closest("[data-event-row] [data-needs-reason]");
    if (needsReason) {  // asks for the reason first (the key and the mouse alike)
      event.preventDefault();
      focusRow(rows(), rows().indexOf(row));
      noteDialog(row, needsReason.closest("form").getAttribute("action"), needsReason.getAttribute("data-reason-for"));
      return;
    }
    if (row && !event.target.closest("a, button, input")) focusRow(rows(), rows().indexOf(row));
    if (row && event.target.closest("[data-note-open]")) {  // the button of the "n" key
      focusRow(rows(), rows().indexOf(row));
      inboxKey("n", event);
      return;
    }
    var all = event.target.closest("[data-select-all-matching]");
    if (all) {
      var form = document.querySelector("[data-bulk-form]");
      var scope = form.querySelector("[data-bulk-scope]");
      var on = scope.value !== "all";
      scope.value = on ? "all" : "selected";
      all.setAttribute("aria-pressed", on ? "true" : "false");
      rows().forEach(function (r) { var b = r.querySelector("[data-select-row]"); if (b) b.checked = on; });
      updateSelection();
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (form && form.matches && form.matches("[data-note-dialog-form]") && event.detail.successful) {
      form.closest("dialog").close();
    }
  });

  // Bulk selection: the count, "select the page", and "all matching" (which a manual change cancels).
  function updateSelection() {
    var form = document.querySelector("[data-bulk-form]");
    if (!form) return;
    var boxes = document.querySelectorAll("[data-select-row]");
    var checked = document.querySelectorAll("[data-select-row]:checked").length;
    var scope = form.querySelector("[data-bulk-scope]");
    var all = form.querySelector("[data-select-all-matching]");
    var label = form.querySelector("[data-selected-count]");
    if (scope.value === "all" && all) {
      label.textContent = "All " + all.getAttribute("data-total") + " matching selected";
    } else {
      label.textContent = checked + " selected";
    }
    var page = form.querySelector("[data-select-page]");
    if (page) page.checked = boxes.length > 0 && checked === boxes.length;
    form.classList.toggle("has-selection", checked > 0 || scope.value === "all");
  }
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches("[data-select-page]")) {
      document.querySelectorAll("[data-select-row]").forEach(function (b) { b.checked = target.checked; });
    }
    if (target.matches("[data-select-row], [data-select-page]")) {
      var form = document.querySelector("[data-bulk-form]");
      var scope = form && form.querySelector("[data-bulk-scope]");
      if (scope) scope.value = "selected";
      updateSelection();
    }
    if (target.matches("[data-other-status]") && target.value) {
      var decide = target.closest("form");
      var hidden = document.createElement("input");
      hidden.type = "hidden"; hidden.name = "status"; hidden.value = target.value;
      decide.appendChild(hidden);
      decide.requestSubmit();
    }
    if (target.closest("[data-cost-form]")) updateCost(target.closest("[data-cost-form]"));
  });

  // "Run checks": the projected cost of the ticked operations against the balance.
  function updateCost(form) {
    var total = 0;
    form.querySelectorAll('input[name="check_types"]:checked').forEach(function (box) {
      total += parseInt(box.getAttribute("data-price") || "0", 10);
    });
    var cost = form.querySelector("[data-cost]");
    if (cost) cost.textContent = total.toLocaleString();
    var balanceEl = form.querySelector("[data-balance]");
    var warning = form.querySelector("[data-cost-warning]");
    if (balanceEl && warning) warning.hidden = total <= parseInt(balanceEl.getAttribute("data-balance"), 10);
  }
  function initCosts(root) {
    (root || document).querySelectorAll("[data-cost-form]").forEach(updateCost);
  }
  document.addEventListener("DOMContentLoaded", function () { initCosts(document); updateSelection(); });
  document.addEventListener("htmx:afterSettle", function () { initCosts(document); });
})();
