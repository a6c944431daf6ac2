// Keyboard navigation of the matrix, as the WAI-ARIA grid pattern: one cell in the tab order (a
// roving tabindex), arrow keys, Home/End (Ctrl: of the grid) and PageUp/PageDown move it; Enter or
// Space opens the focused cell's failure, Escape closes it. Without scripts the summaries and
// links stay focusable as plain HTML.
(function () {
  var grid = document.querySelector("table.matrix");
  if (!grid) return;
  grid.setAttribute("role", "grid");
  var all = [];
  for (var i = 0; i < grid.rows.length; i++) {
    for (var k = 0; k < grid.rows[i].cells.length; k++) all.push(grid.rows[i].cells[k]);
  }
  all.forEach(function (c) { c.tabIndex = -1; });
  // What a cell holds is reached through the cell: Enter, not a tab stop per summary or link.
  var inner = grid.querySelectorAll("th a, td > a, summary");
  for (var j = 0; j < inner.length; j++) inner[j].tabIndex = -1;
  var current = grid.querySelector("tbody > tr > *") || all[0];
  if (!current) return;
  current.tabIndex = 0;
  function rows() {
    return Array.prototype.filter.call(grid.rows, function (r) { return !r.hidden; });
  }
  // The grid's own cell holding el (not a cell of a wire log's table inside it).
  function cellOf(el) {
    for (; el && el !== grid; el = el.parentElement) {
      var row = el.parentElement;
      if (/^T[DH]$/.test(el.tagName) && row && row.parentElement && row.parentElement.parentElement === grid) return el;
    }
    return null;
  }
  function move(to) {
    if (!to) return;
    current.tabIndex = -1;
    current = to;
    to.tabIndex = 0;
    to.focus();
  }
  // The cell at (row r, column c), clamped to the visible rows and the row's cells.
  function at(list, r, c) {
    var row = list[Math.max(0, Math.min(list.length - 1, r))];
    return row ? row.cells[Math.max(0, Math.min(row.cells.length - 1, c))] : null;
  }
  function target(key, ctrl, cell) {
    var list = rows(), r = list.indexOf(cell.parentElement), c = cell.cellIndex;
    var last = list.length - 1;
    switch (key) {
      case "ArrowRight": return at(list, r, c + 1);
      case "ArrowLeft": return at(list, r, c - 1);
      case "ArrowDown": return at(list, r + 1, c);
      case "ArrowUp": return at(list, r - 1, c);
      case "PageDown": return at(list, r + 10, c);
      case "PageUp": return at(list, r - 10, c);
      case "Home": return ctrl ? at(list, 0, 0) : at(list, r, 0);
      case "End": return ctrl ? at(list, last, Infinity) : at(list, r, Infinity);
    }
    return undefined;
  }
  function activate(cell) {
    var d = cell.querySelector("details");
    if (d) d.open = !d.open;
    else {
      var a = cell.querySelector("a");
      if (a) a.click();
    }
  }
  grid.addEventListener("keydown", function (e) {
    var cell = cellOf(e.target);
    if (!cell) return;
    if (e.key === "Escape") {
      var open = cell.querySelector("details[open]");
      if (open) {
        open.open = false;
        move(cell);
        e.preventDefault();
      }
      return;
    }
    // The cell, or its summary once clicked: the summary's own Enter and Space toggle it.
    var summary = e.target.tagName === "SUMMARY" && e.target.parentElement.parentElement === cell;
    if ((e.target !== cell && !summary) || e.altKey || e.metaKey) return;
    if (e.key === "Enter" || e.key === " ") {
      if (!summary) {
        activate(cell);
        e.preventDefault();
      }
      return;
    }
    var to = target(e.key, e.ctrlKey, cell);
    if (to === undefined) return;
    e.preventDefault();
    move(to);
  });
  // A click or a link (the page's address) puts the roving tab stop where the reader is.
  grid.addEventListener("focusin", function (e) {
    var cell = cellOf(e.target);
    if (cell && cell !== current) {
      current.tabIndex = -1;
      current = cell;
      cell.tabIndex = 0;
    }
  });
  // A filter that hides the tab stop's row moves it to the first row shown, in its column.
  var f = document.getElementById("filters");
  if (f) f.addEventListener("change", function () {
    if (!current.parentElement.hidden) return;
    var list = rows().filter(function (r) { return r.parentElement.tagName === "TBODY"; });
    var to = at(list.length ? list : rows(), 0, current.cellIndex);
    if (to) {
      current.tabIndex = -1;
      current = to;
      to.tabIndex = 0;
    }
  });
  // A link to a cell (a root cause's, or the page's address) opens its failure and focuses it.
  // A link to a row (a check's id) focuses its first cell.
  function opened() {
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (el && el.parentElement && el.parentElement.parentElement === grid) return move(el.cells[0]);
    var d = el && el.querySelector("details");
    if (!d) return;
    d.open = true;
    if (cellOf(el) === el) move(el);
    else d.querySelector("summary").focus();
  }
  window.addEventListener("hashchange", opened);
  opened();
})();
