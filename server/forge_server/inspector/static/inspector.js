// Live updates without a reload: a running run's page reads its new
// timeline entries from a server-sent event stream; the first page of the
// runs list fetches its rows again every two seconds.
"use strict";

function followRun(timeline) {
  const source = new EventSource(timeline.dataset.liveUrl);
  source.onmessage = (msg) => {
    const data = JSON.parse(msg.data);
    timeline.insertAdjacentHTML("beforeend", data.html);
  };
  source.addEventListener("done", (msg) => {
    source.close();
    const data = JSON.parse(msg.data);
    const badge = document.getElementById("run-status");
    if (badge) {
      badge.textContent = data.status;
      badge.className = "badge " + data.status;
    }
    const outcome = document.getElementById("run-outcome");
    if (outcome && data.outcome) {
      outcome.textContent = data.outcome;
    }
  });
}

function refreshRows(body) {
  const url = new URL(window.location.href);
  url.searchParams.set("fragment", "rows");
  setInterval(async () => {
    try {
      const response = await fetch(url, { credentials: "same-origin" });
      if (response.ok) {
        body.innerHTML = await response.text();
      }
    } catch (e) {
      // The server restarts or the network drops: try again next time.
    }
  }, 2000);
}

document.addEventListener("DOMContentLoaded", () => {
  const timeline = document.getElementById("timeline");
  if (timeline && timeline.dataset.liveUrl) {
    followRun(timeline);
  }
  const runs = document.getElementById("runs");
  if (runs && runs.dataset.live) {
    refreshRows(document.getElementById("run-rows"));
  }
});
