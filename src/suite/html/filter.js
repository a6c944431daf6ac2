(function () {
  var f = document.getElementById("filters");
  if (!f) return;
  f.hidden = false;
  var rows = Array.prototype.slice.call(document.querySelectorAll("table.matrix > tbody > tr"));
  var shown = document.getElementById("shown");
  function has(list, word) {
    return (" " + list + " ").indexOf(" " + word + " ") >= 0;
  }
  function apply() {
    var v = f.elements.verdict.value, s = f.elements.severity.value, sec = f.elements.section.value;
    var n = 0;
    rows.forEach(function (r) {
      var vs = r.getAttribute("data-verdicts");
      var okV = v === "" || (v === "!pass" ? /\b(fail|stale|untestable|blocked|xfail|not-run)\b/.test(vs) : has(vs, v));
      var ok = okV && (s === "" || r.getAttribute("data-severity") === s) &&
        (sec === "" || has(r.getAttribute("data-sections"), sec));
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + " of " + rows.length + " checks shown";
  }
  f.addEventListener("change", apply);
  apply();
})();
