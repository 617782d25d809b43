/* Small behaviours of the pages, kept out of the HTML (the CSP allows no inline script):
   a <select data-autosubmit> submits its form when it changes; a form sent by htmx that
   holds a <progress data-upload> shows how much of its body has been sent. */
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("select[data-autosubmit]") && field.form) {
      field.form.requestSubmit();
    }
  });
  document.addEventListener("htmx:xhr:progress", function (event) {
    var form = event.target;
    var bar = form.querySelector && form.querySelector("progress[data-upload]");
    if (bar && event.detail.lengthComputable) {
      bar.hidden = false;
      bar.max = event.detail.total;
      bar.value = event.detail.loaded;
    }
  });
})();
