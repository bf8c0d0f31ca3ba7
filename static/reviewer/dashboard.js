// The dashboard's behaviour, served as a file: the content security policy allows no inline script.
//
// Keys (ignored while typing in a field):
//   queue   j / k select a row, Enter opens it, x ticks it for a bulk decision
//   KPR     j / k move the cursor between operations, x excludes the operation under it,
//           a approves, r rejects (opens the reason box), c comments, Ctrl+Enter in the reason
//           box sends the verdict it was opened for
//   both    ? shows the keys, Escape closes the help
(() => {
  "use strict";

  const typing = (element) =>
    element && (["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName) || element.isContentEditable);

  const cursor = (items, current, step) => {
    items.forEach((item) => item.classList.remove("selected"));
    const index = Math.max(0, Math.min(items.length - 1, items.indexOf(current) + step));
    const next = items[index];
    if (next) {
      next.classList.add("selected");
      next.scrollIntoView({block: "nearest"});
    }
    return next;
  };

  // --- queue ----------------------------------------------------------------------------
  const rows = () => [...document.querySelectorAll("tr[data-href]")];
  const selectedRow = () => document.querySelector("tr[data-href].selected");
  let rememberedPull = null;

  const updateBulk = () => {
    const count = document.querySelectorAll("input[name=pull]:checked").length;
    const label = document.getElementById("bulk-count");
    const bulk = document.getElementById("bulk");
    if (!label || !bulk) return;
    label.textContent = count ? `${count} selected` : "Select rows for a bulk decision";
    bulk.classList.toggle("armed", count > 0);
  };

  // --- one KPR --------------------------------------------------------------------------
  const operations = () => [...document.querySelectorAll("section.op")];
  const currentOperation = () => document.querySelector("section.op.selected");

  const submitVerdict = (verdict) => {
    const form = document.getElementById("decide-form");
    const button = document.getElementById(verdict === "APPROVE" ? "verdict-approve" : "verdict-reject");
    if (!form || !button) return;
    const reason = document.getElementById("reason");
    form.dataset.intent = verdict;
    if (reason && !reason.value.trim()) {
      reason.placeholder = `Reason for ${verdict === "APPROVE" ? "approving" : "rejecting"} (required) · Ctrl+Enter sends`;
      reason.focus();
      return;
    }
    // A click, not requestSubmit(): htmx sends the value of the button that was clicked.
    button.click();
  };

  const openComment = () => {
    const operation = currentOperation();
    const box = operation ? operation.querySelector("details.comment") : document.getElementById("pull-comment");
    if (!box) return;
    box.open = true;
    box.querySelector("textarea")?.focus();
  };

  const excludeCurrent = () => {
    const operation = currentOperation();
    // No cursor yet: x places it on the first operation and excludes nothing it was not on.
    if (!operation) return cursor(operations(), null, 1);
    const box = document.querySelector(`input[name=exclude][value="${operation.dataset.position}"]`);
    if (!box) return;
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", {bubbles: true}));
  };

  const toggleHelp = (open) => {
    const help = document.getElementById("help");
    if (help) help.classList.toggle("open", open);
  };

  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.id === "reason") {
      event.preventDefault();
      submitVerdict(document.getElementById("decide-form")?.dataset.intent || "APPROVE");
      return;
    }
    if (event.key === "Escape") {
      toggleHelp(false);
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    const onPull = operations().length > 0;
    const handled = {
      "?": () => toggleHelp(!document.getElementById("help")?.classList.contains("open")),
      j: () => (onPull ? cursor(operations(), currentOperation(), 1) : cursor(rows(), selectedRow(), 1)),
      k: () => (onPull ? cursor(operations(), currentOperation(), -1) : cursor(rows(), selectedRow(), -1)),
      Enter: () => {
        const row = selectedRow();
        if (!onPull && row) window.location = row.dataset.href;
      },
      x: () => {
        if (onPull) return excludeCurrent();
        const box = selectedRow()?.querySelector("input[name=pull]");
        if (box) {
          box.checked = !box.checked;
          updateBulk();
        }
      },
      a: () => submitVerdict("APPROVE"),
      r: () => submitVerdict("REJECT"),
      c: () => openComment(),
    }[event.key];
    if (!handled) return;
    // The key is a command, never text: r opens the reason box without typing an "r" into it.
    event.preventDefault();
    handled();
  });

  document.addEventListener("change", (event) => {
    if (event.target.matches("input[name=pull]")) updateBulk();
    if (event.target.matches("input[name=exclude]")) {
      const section = document.querySelector(`section.op[data-position="${event.target.value}"]`);
      section?.classList.toggle("excluding", event.target.checked);
    }
  });

  document.addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-href]");
    if (row && !event.target.closest("a, input, label")) cursor(rows(), row, 0);
    const operation = event.target.closest("section.op");
    if (operation) cursor(operations(), operation, 0);
  });

  // Polling the queue never throws away what the reviewer is doing: while rows are ticked for a
  // bulk decision, the refresh waits; the selected row is kept across a refresh.
  document.addEventListener("htmx:beforeRequest", (event) => {
    const source = event.detail.elt;
    if (source.matches("[data-poll]") && event.detail.requestConfig?.triggeringEvent?.type !== "change") {
      if (document.querySelector("input[name=pull]:checked")) event.preventDefault();
    }
    rememberedPull = selectedRow()?.dataset.pull || null;
  });
  document.addEventListener("htmx:afterSwap", () => {
    if (rememberedPull) {
      document.querySelector(`tr[data-pull="${rememberedPull}"]`)?.classList.add("selected");
    }
    updateBulk();
  });
})();
