// docsmith dashboard: the little the pages need beyond HTML. A live job
// timeline over EventSource, copy buttons, and confirmations.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  // Forms that ask first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) e.preventDefault();
    });
  });

  // Copy buttons.
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var el = document.getElementById(btn.getAttribute("data-copy"));
      if (!el) return;
      el.select();
      var done = function () { btn.textContent = "Copied"; setTimeout(function () { btn.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(el.value).then(done, function () { document.execCommand("copy"); done(); });
      else { document.execCommand("copy"); done(); }
    });
  });

  // The live timeline of a job still at work.
  var list = document.getElementById("timeline");
  if (!list || !list.dataset.stream || !window.EventSource) return;
  var url = list.dataset.stream + "?lastEventId=" + encodeURIComponent(list.dataset.last || "0");
  var es = new EventSource(url);
  var live = document.getElementById("live");
  es.addEventListener("timeline", function (msg) {
    var ev = JSON.parse(msg.data);
    var li = document.createElement("li");
    li.className = "ev-" + ev.type;
    var t = document.createElement("time");
    t.dateTime = ev.at;
    t.textContent = ev.at.slice(11, 19);
    li.appendChild(t);
    li.appendChild(document.createTextNode(" " + ev.text));
    list.appendChild(li);
    list.scrollTop = list.scrollHeight;
  });
  es.addEventListener("settled", function () {
    es.close();
    if (live) live.textContent = "done";
    // The final state (files, pull request, summary) is on the page itself.
    window.location.reload();
  });
  es.onerror = function () {
    if (live) live.textContent = "reconnecting";
  };
});
