// A running instance's page listens to /instances/ID/events and, when the
// instance changes, fetches the page again and swaps the live part in place.
(function () {
  var live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource) { return; }
  var source = new EventSource(live.dataset.events);
  source.addEventListener("change", function (ev) {
    if (ev.data === live.dataset.version) { return; }
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
      if (!next) { return; }
      live.innerHTML = next.innerHTML;
      live.dataset.version = next.dataset.version;
      if (!next.dataset.events) { source.close(); }
    });
  });
})();
