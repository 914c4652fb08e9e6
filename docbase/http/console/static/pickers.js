// docbase console: the pickers' search. A lookup field's first 200 documents, an image
// or file field's newest 200 files, come with the page; its "Find a document to pick"
// ("an image", "a file") box asks the server (GET /_/pick/<collection>?text=... or
// /_/pick-media/<image|file>?text=...) for the ones holding the text typed, and lists
// them as buttons (their label and id as text, never as HTML). A click adds the id.
"use strict";
(function () {
  var boxes = document.querySelectorAll("input[data-pick]");
  Array.prototype.forEach.call(boxes, function (box) {
    var into = document.getElementById(box.dataset.into);
    var list = document.getElementById(box.dataset.results);
    var timer = null;
    var asked = 0;

    function say(text) {
      var item = document.createElement("li");
      item.textContent = text;
      list.replaceChildren(item);
    }

    function choice(found) {
      var item = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = (found.label || "(no text)") + " · " + found.id;
      button.addEventListener("click", function () {
        var ids = into.value.split(",").map(function (id) { return id.trim(); })
          .filter(function (id) { return id !== ""; });
        if (ids.indexOf(found.id) < 0) {
          ids.push(found.id);
        }
        into.value = ids.join(", ");
        list.replaceChildren();
        box.value = "";
        into.focus();
      });
      item.appendChild(button);
      return item;
    }

    function search() {
      var text = box.value.trim();
      var ticket = ++asked;
      if (!text) {
        list.replaceChildren();
        return;
      }
      fetch(box.dataset.pick + "?text=" + encodeURIComponent(text),
            { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("HTTP " + response.status);
          }
          return response.json();
        })
        .then(function (found) {
          if (ticket !== asked) {
            return;  // a newer search is on its way
          }
          if (found.length === 0) {
            say("Nothing found for \u201c" + text + "\u201d.");
            return;
          }
          list.replaceChildren.apply(list, found.map(choice));
        })
        .catch(function (error) {
          say("The search failed (" + error.message + ").");
        });
    }

    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(search, 250);
    });
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {  // searches now, and never submits the document
        event.preventDefault();
        clearTimeout(timer);
        search();
      }
    });
  });
})();
