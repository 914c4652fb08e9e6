// docbase console: live updates of the collection browser from the change feed.
// The page is rendered by the server; this script only reloads the document table
// when another client writes to its collection. The table it inserts comes from the
// server's own autoescaped page (parsed with DOMParser, which runs no script); no
// document value is ever inserted as HTML.
"use strict";
(function () {
  var table = document.getElementById("documents");
  var status = document.getElementById("live");
  if (!table || !status || !table.dataset.events || !window.EventSource) {
    return;
  }
  var collection = table.dataset.collection;
  var busy = false;
  var again = false;

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("documents");
        var current = document.getElementById("documents");
        if (fresh && current) {
          current.replaceWith(document.importNode(fresh, true));
        }
        status.textContent = "Live: updated at " + new Date().toLocaleTimeString();
      })
      .catch(function (error) {
        status.textContent = "Live update failed (" + error.message + "); reload the page.";
      })
      .finally(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  var source = new EventSource(table.dataset.events);
  source.addEventListener("open", function () {
    status.textContent = "Live: this table follows changes as they happen.";
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED) {
      status.textContent = "Live updates are off (setting realtime.global).";
    }
  });
  ["post", "put", "delete"].forEach(function (name) {
    source.addEventListener(name, function (event) {
      var change = JSON.parse(event.data);
      if (change.collection === collection) {
        refresh();
      }
    });
  });
})();

// Media uploads: files picked or dropped are sent as multipart/form-data with the
// session's CSRF token in a header, with a progress bar; then the grid is reloaded.
(function () {
  var form = document.getElementById("upload");
  if (!form) {
    return;
  }
  var input = document.getElementById("files");
  var progress = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");

  function send(files) {
    if (!files || files.length === 0) {
      status.textContent = "Choose or drop at least one file.";
      return;
    }
    var body = new FormData();
    Array.prototype.forEach.call(files, function (file) {
      body.append("file", file, file.name);
    });
    var request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.setRequestHeader("X-CSRF-Token", form.dataset.csrf);
    progress.hidden = false;
    request.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        progress.value = Math.round((event.loaded / event.total) * 100);
        progress.textContent = progress.value + "%";
      }
    });
    request.addEventListener("load", function () {
      if (request.status === 201) {
        status.textContent = "Uploaded " + files.length + " file(s).";
        window.location.reload();
      } else {
        var message = "HTTP " + request.status;
        try {
          message = JSON.parse(request.responseText).message || message;
        } catch (ignored) {
          // an HTML error page: keep the status
        }
        status.textContent = "Upload refused: " + message;
      }
    });
    request.addEventListener("error", function () {
      status.textContent = "Upload failed: the connection broke.";
    });
    request.send(body);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    send(input.files);
  });
  form.addEventListener("dragover", function (event) {
    event.preventDefault();
    form.classList.add("over");
  });
  form.addEventListener("dragleave", function () {
    form.classList.remove("over");
  });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    form.classList.remove("over");
    send(event.dataTransfer.files);
  });
})();

// The document editor keeps the edit being saved in this tab's sessionStorage. When the
// session ended before the save, the server sends the browser to sign in and back to
// the document with ?draft=1: the edit is put back into the form, to be saved again
// (with the version it started from, so a change made meanwhile still shows as a
// conflict). Any other visit to the page drops the kept edit.
(function () {
  var form = document.getElementById("document-form");
  if (!form || !window.sessionStorage) {
    return;
  }
  var key = "docbase-draft:" + new URL(form.action, window.location.href).pathname;
  var kept = window.sessionStorage.getItem(key);
  window.sessionStorage.removeItem(key);
  if (kept && new URLSearchParams(window.location.search).get("draft") === "1") {
    var values = JSON.parse(kept);
    Object.keys(values).forEach(function (name) {
      var field = form.elements.namedItem(name);
      if (field && name !== "csrf") {
        field.value = values[name];
      }
    });
    var note = document.getElementById("draft-note");
    if (note) {
      note.hidden = false;
      note.textContent = "Your unsaved edit is back: save it again.";
    }
  }
  form.addEventListener("submit", function () {
    var values = {};
    new FormData(form).forEach(function (value, name) {
      if (typeof value === "string" && name !== "csrf") {
        values[name] = value;
      }
    });
    window.sessionStorage.setItem(key, JSON.stringify(values));
  });
})();

// The settings form: the value box hides what is typed only for a password or secret.
(function () {
  var path = document.getElementById("setting-path");
  var value = document.getElementById("setting-value");
  if (!path || !value) {
    return;
  }
  var secret = new RegExp(path.dataset.secret || "$^", "i");
  function follow() {
    value.type = secret.test(path.value) ? "password" : "text";
  }
  path.addEventListener("input", follow);
  follow();
})();

// The column chooser: the ticked columns are remembered per collection in this
// browser (localStorage) and asked for again when the collection is opened without any.
(function () {
  var chooser = document.getElementById("columns");
  var table = document.getElementById("documents");
  if (!chooser || !table || !window.localStorage) {
    return;
  }
  var form = chooser.closest("form");
  var key = "docbase-columns:" + table.dataset.collection;
  var here = new URL(window.location.href);
  var remembered = window.localStorage.getItem(key);
  if (remembered && !here.searchParams.has("cols")) {
    JSON.parse(remembered).forEach(function (name) {
      here.searchParams.append("cols", name);
    });
    window.location.replace(here.toString());
    return;
  }
  form.addEventListener("submit", function () {
    var boxes = chooser.querySelectorAll("input[name=cols]");
    if (!chooser.open) {  // not touched: the remembered choice (or none) stands
      Array.prototype.forEach.call(boxes, function (box) { box.disabled = true; });
      return;
    }
    var ticked = Array.prototype.filter.call(boxes, function (box) { return box.checked; })
      .map(function (box) { return box.value; });
    if (ticked.length > 0) {
      window.localStorage.setItem(key, JSON.stringify(ticked));
    } else {
      window.localStorage.removeItem(key);
    }
  });
})();

// The table's "select every document of this page" box, and the collections sidebar's
// search box (it hides the collections whose name does not contain what is typed).
document.addEventListener("change", function (event) {
  if (event.target.id === "select-all") {
    document.querySelectorAll("#documents input[name=ids]").forEach(function (box) {
      box.checked = event.target.checked;
    });
  }
});
document.addEventListener("input", function (event) {
  if (event.target.id !== "find-collection") {
    return;
  }
  var wanted = event.target.value.trim().toLowerCase();
  document.querySelectorAll("#collection-list li").forEach(function (item) {
    item.hidden = wanted !== "" && item.textContent.toLowerCase().indexOf(wanted) < 0;
  });
});

// The filter builder: a field (completed from the schema and the fields seen), a
// condition and a value become one more condition of the raw q box, then the search
// runs. A value reading as JSON (a number, true, null, "text") is taken as such.
(function () {
  var builder = document.getElementById("builder");
  var q = document.getElementById("q");
  if (!builder || !q) {
    return;
  }
  function typed(text) {
    try {
      return JSON.parse(text);
    } catch (ignored) {
      return text;
    }
  }
  function escaped(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  builder.addEventListener("submit", function (event) {
    event.preventDefault();
    var field = document.getElementById("builder-field").value.trim();
    var operator = document.getElementById("builder-operator").value;
    var text = document.getElementById("builder-value").value;
    var status = document.getElementById("builder-status");
    if (!field) {
      status.textContent = "Choose a field first.";
      return;
    }
    var query = {};
    if (q.value.trim()) {
      try {
        query = JSON.parse(q.value);
      } catch (error) {
        status.textContent = "The q box does not hold valid JSON: " + error.message;
        return;
      }
    }
    var value = typed(text);
    if (operator === "eq") {
      query[field] = value;
    } else {
      var condition = typeof query[field] === "object" && query[field] !== null &&
        !Array.isArray(query[field]) ? query[field] : {};
      if (operator === "$regex") {
        condition.$regex = escaped(text);
        condition.$options = "i";
      } else {
        condition[operator] = operator === "$exists" ? value !== false : value;
      }
      query[field] = condition;
    }
    q.value = JSON.stringify(query);
    document.getElementById("find").requestSubmit();
  });
})();
